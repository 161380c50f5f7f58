// Asynchronous tasks (videos, batches): every signed-in user their own, admins
// everyone's. Loads on demand, so a user's first screen never downloads it.
import PendingActionsIcon from '@mui/icons-material/PendingActions';
import { Role } from '../../../common/roles';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'task',
  list: lazyNamed(() => import('./TaskList'), 'TaskList'),
  icon: PendingActionsIcon,
  menu: { label: 'task.menu', role: Role.user },
} satisfies ResourceDefinition;
