// Screens load on demand: a user's first screen and the login page never download them.
import KeyIcon from '@mui/icons-material/Key';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'token',
  list: lazyNamed(() => import('./TokenList'), 'TokenList'),
  create: lazyNamed(() => import('./TokenCreate'), 'TokenCreate'),
  edit: lazyNamed(() => import('./TokenEdit'), 'TokenEdit'),
  paths: { create: '/token/add', edit: '/token/edit/:id' },
  icon: KeyIcon,
  recordRepresentation: 'name',
  menu: { label: 'app.menu.token' },
} satisfies ResourceDefinition;
