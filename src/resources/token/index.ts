// The list loads on demand: a user's first screen and the login page never download it.
import KeyIcon from '@mui/icons-material/Key';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./TokenList').then((module) => ({ default: module.TokenList }))),
  icon: KeyIcon,
  recordRepresentation: 'name',
};
