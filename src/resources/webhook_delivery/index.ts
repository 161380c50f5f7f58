// The webhook delivery log (admin), in ra-data-simple-rest's convention: a list
// only, opened from the webhooks screen rather than the menu.
import OutboxIcon from '@mui/icons-material/Outbox';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'webhook_delivery',
  list: lazyNamed(() => import('../webhook/screens'), 'WebhookDeliveryList'),
  simpleRest: true,
  icon: OutboxIcon,
  recordRepresentation: 'event_id',
} satisfies ResourceDefinition;
