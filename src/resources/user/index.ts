// Screens load on demand: a user's first screen and the login page never download them.
import PeopleIcon from '@mui/icons-material/People';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'user',
  list: lazyNamed(() => import('./UserList'), 'UserList'),
  create: lazyNamed(() => import('./UserForms'), 'UserCreate'),
  edit: lazyNamed(() => import('./UserForms'), 'UserEdit'),
  paths: { create: '/user/add', edit: '/user/edit/:id' },
  icon: PeopleIcon,
  recordRepresentation: 'username',
  menu: { label: 'app.menu.user', role: 10 },
} satisfies ResourceDefinition;
