// The resources one-api never had are served in ra-data-simple-rest's
// convention (server/routes/api/simpleRest.ts) and handed to it whole: a new
// one needs a server route and its resource folder marked `simpleRest`. Which
// resources those are, the data provider is told at construction (the registry's
// SIMPLE_REST_RESOURCES, through src/consoleDataProvider.ts): it knows no resource module.
import type { DataProvider } from 'react-admin';
import type { RestClient } from './httpClient';

/**
 * ra-data-simple-rest over the console's own fetch (credentials, error
 * messages, 401 handling), loaded with the first call for one of its
 * resources: the login page and the one-api screens never need it.
 */
export function simpleRestOver(restClient: RestClient): DataProvider {
  let provider: Promise<DataProvider> | undefined;
  const load = () =>
    (provider ??= import('ra-data-simple-rest').then(({ default: simpleRestProvider }) => simpleRestProvider('/api', restClient as never)));
  const methods = ['getList', 'getOne', 'getMany', 'getManyReference', 'create', 'update', 'updateMany', 'delete', 'deleteMany'] as const;
  return Object.fromEntries(
    methods.map((method) => [
      method,
      async (resource: string, params: unknown) => {
        const loaded = (await load()) as unknown as Record<string, (resource: string, params: unknown) => Promise<unknown>>;
        return loaded[method](resource, params);
      },
    ]),
  ) as unknown as DataProvider;
}
