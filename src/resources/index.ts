// Every console resource, in menu order: App.tsx routes them and the top menu
// lists them from here, so a new screen is its folder plus one line below.
import audit from './audit';
import channel from './channel';
import log from './log';
import redemption from './redemption';
import task from './task';
import token from './token';
import user from './user';
import webhook from './webhook';
import webhookDelivery from './webhook_delivery';
import type { ResourceDefinition } from './types';

export type { MenuEntry, ResourceDefinition } from './types';

export const RESOURCES: readonly ResourceDefinition[] = [channel, token, redemption, user, log, task, audit, webhook, webhookDelivery];

/** The resources in ra-data-simple-rest's convention, under /api/{name}: handed to the data provider at construction. */
export const SIMPLE_REST_RESOURCES: ReadonlySet<string> = new Set(
  RESOURCES.filter((resource) => resource.simpleRest).map((resource) => resource.name),
);
