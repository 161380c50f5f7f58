// Screens load on demand: a user's first screen and the login page never download them.
import RedeemIcon from '@mui/icons-material/Redeem';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'redemption',
  list: lazyNamed(() => import('./RedemptionList'), 'RedemptionList'),
  create: lazyNamed(() => import('./RedemptionForms'), 'RedemptionCreate'),
  edit: lazyNamed(() => import('./RedemptionForms'), 'RedemptionEdit'),
  paths: { create: '/redemption/add', edit: '/redemption/edit/:id' },
  icon: RedeemIcon,
  recordRepresentation: 'name',
  menu: { label: 'app.menu.redemption', role: 10 },
} satisfies ResourceDefinition;
