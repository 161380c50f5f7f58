// The settings calls of the /setting admin tabs and the update check, on the
// shared httpClient (so they fail like every other console call).
//
// Method          → request
// getOptions      → GET  /api/option/            → [{ key, value, set? }] (secrets: value '' and whether one is set)
// updateOption    → PUT  /api/option/            body: { key, value }
// sendTestEmail   → POST /api/option/test_email  → the address the test e-mail went to
// defaultPrices   → GET  /api/pricing/defaults   → DefaultModelPrice[] (each model's price before the ratio options)
// latestRelease   → GET  /api/release/latest     → ReleaseInfo (the server fetches it; RELEASE_CHECK_URL)
// importState     → GET  /api/import/            → ImportJobState (root only: progress, then the report)
// startImport     → POST /api/import/            body: { source, apply, merge, with_logs } → ImportJobState
import type { ImportJobState } from '../../common/importJob';
import type { DefaultModelPrice } from '../../common/pricing';
import type { ReleaseInfo } from '../../common/version';
import { httpClient as defaultHttpClient, type HttpClient } from './httpClient';

/** One row of GET /api/option/. */
export interface OptionEntry {
  key: string;
  value: string;
  /** Only on secrets: whether a value is stored (the value itself never leaves the server). */
  set?: boolean;
}

export const settingsEndpoints = {
  options: '/api/option/',
  testEmail: '/api/option/test_email',
  defaultPrices: '/api/pricing/defaults',
  latestRelease: '/api/release/latest',
  import: '/api/import/',
} as const;

/** What the console import sends: the source and the switches of `npm run import`. */
export interface ImportRequest {
  source: string;
  apply: boolean;
  merge: boolean;
  with_logs: boolean;
}

export function createSettingsProvider(httpClient: HttpClient = defaultHttpClient) {
  return {
    getOptions: async () => (await httpClient<OptionEntry[]>(settingsEndpoints.options)).data ?? [],
    updateOption: async (key: string, value: string) => {
      await httpClient(settingsEndpoints.options, { method: 'PUT', body: { key, value } });
    },
    defaultPrices: async () => (await httpClient<DefaultModelPrice[]>(settingsEndpoints.defaultPrices)).data ?? [],
    sendTestEmail: async () => (await httpClient<string>(settingsEndpoints.testEmail, { method: 'POST' })).data ?? '',
    latestRelease: async () => (await httpClient<ReleaseInfo>(settingsEndpoints.latestRelease)).data as ReleaseInfo,
    importState: async () => (await httpClient<ImportJobState>(settingsEndpoints.import)).data as ImportJobState,
    startImport: async (request: ImportRequest) =>
      (await httpClient<ImportJobState>(settingsEndpoints.import, { method: 'POST', body: request })).data as ImportJobState,
  };
}

export type SettingsProvider = ReturnType<typeof createSettingsProvider>;
export const settingsProvider = createSettingsProvider();
