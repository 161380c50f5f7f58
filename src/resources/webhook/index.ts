// Webhooks (admin): served in ra-data-simple-rest's convention, so react-admin's
// own routes (/webhook, /webhook/create, /webhook/:id) and no data-provider code.
import WebhookIcon from '@mui/icons-material/Webhook';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./screens').then((module) => ({ default: module.WebhookList }))),
  create: lazy(() => import('./screens').then((module) => ({ default: module.WebhookCreate }))),
  edit: lazy(() => import('./screens').then((module) => ({ default: module.WebhookEdit }))),
  icon: WebhookIcon,
  recordRepresentation: 'name',
};
