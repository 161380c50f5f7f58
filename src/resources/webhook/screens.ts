// Every webhook screen in one chunk, loaded on demand: one more lazy chunk for
// the bundler to share modules with, not four.
export { WebhookCreate } from './WebhookCreate';
export { WebhookEdit } from './WebhookEdit';
export { WebhookList } from './WebhookList';
export { WebhookDeliveryList } from '../webhook_delivery/WebhookDeliveryList';
