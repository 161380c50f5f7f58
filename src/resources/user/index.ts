// The list loads on demand: a user's first screen and the login page never download it.
import PeopleIcon from '@mui/icons-material/People';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./UserList').then((module) => ({ default: module.UserList }))),
  icon: PeopleIcon,
  recordRepresentation: 'username',
};
