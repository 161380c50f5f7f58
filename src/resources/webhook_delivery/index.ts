// The webhook delivery log (admin), in ra-data-simple-rest's convention: a list only.
import OutboxIcon from '@mui/icons-material/Outbox';
import { lazy } from 'react';

export default {
  list: lazy(() => import('../webhook/screens').then((module) => ({ default: module.WebhookDeliveryList }))),
  icon: OutboxIcon,
  recordRepresentation: 'event_id',
};
