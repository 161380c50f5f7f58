// The list loads on demand: a user's first screen and the login page never download it.
import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'log',
  list: lazyNamed(() => import('./LogList'), 'LogList'),
  icon: ReceiptLongIcon,
  menu: { label: 'app.menu.log' },
} satisfies ResourceDefinition;
