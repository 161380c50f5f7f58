// The console's data provider, as react-admin's screens get it: src/dataProvider's, handed
// the registry's simple-REST resources at construction. It lives beside App.tsx because it
// joins the two: the data provider imports no resource module, and the registry builds no provider.
import { createDataProvider } from './dataProvider';
import type { HttpClient, RestClient } from './dataProvider/httpClient';
import { SIMPLE_REST_RESOURCES } from './resources';

/** A data provider that sends the registry's simple-REST resources to ra-data-simple-rest. */
export function createConsoleDataProvider(httpClient?: HttpClient, restClient?: RestClient) {
  return createDataProvider(httpClient, restClient, SIMPLE_REST_RESOURCES);
}

/** The one App hands to <Admin>. */
export const consoleDataProvider = createConsoleDataProvider();
