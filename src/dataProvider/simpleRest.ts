// The resources one-api never had are served in ra-data-simple-rest's
// convention (server/routes/api/simpleRest.ts) and handed to it whole: a new
// one needs its name here, a server route and a resource folder.
import simpleRestProvider from 'ra-data-simple-rest';
import type { DataProvider } from 'react-admin';
import type { RestClient } from './httpClient';

/** The resources in ra-data-simple-rest's convention, under /api/{name}. */
export const SIMPLE_REST_RESOURCES: ReadonlySet<string> = new Set(['webhook', 'webhook_delivery']);

export const isSimpleRest = (resource: string) => SIMPLE_REST_RESOURCES.has(resource);

/** ra-data-simple-rest over the console's own fetch (credentials, error messages, 401 handling). */
export const simpleRestOver = (restClient: RestClient): DataProvider => simpleRestProvider('/api', restClient as never);
