// Webhooks (admin): served in ra-data-simple-rest's convention, so react-admin's
// own routes (/webhook, /webhook/create, /webhook/:id) and no data-provider code.
import WebhookIcon from '@mui/icons-material/Webhook';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'webhook',
  list: lazyNamed(() => import('./screens'), 'WebhookList'),
  create: lazyNamed(() => import('./screens'), 'WebhookCreate'),
  edit: lazyNamed(() => import('./screens'), 'WebhookEdit'),
  simpleRest: true,
  icon: WebhookIcon,
  recordRepresentation: 'name',
  menu: { label: 'webhooks.menu', role: 10 },
} satisfies ResourceDefinition;
