// The audit log (admin and root): loads on demand, so nobody else downloads it.
import PolicyIcon from '@mui/icons-material/Policy';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'audit',
  list: lazyNamed(() => import('./AuditList'), 'AuditList'),
  icon: PolicyIcon,
  menu: { label: 'audit.menu', role: 10 },
} satisfies ResourceDefinition;
