// The calls of the Settings panel "Stored rows and retention", on the shared
// httpClient (so they fail like every other console call).
//
// Method   → request
// report   → GET  /api/retention/              → RetentionReport (rows, sizes, retention, last prune, the prune job)
//            GET  /api/retention/?fresh=true   the same, counted again now rather than the counts of the last minute
// prune    → POST /api/retention/prune         → PruneStart (the prune started, or the one already running)
import type { PruneStart, RetentionReport } from '../../common/retention';
import { httpClient as defaultHttpClient, type HttpClient } from './httpClient';

export const retentionEndpoints = {
  report: (fresh = false) => (fresh ? '/api/retention/?fresh=true' : '/api/retention/'),
  prune: '/api/retention/prune',
} as const;

export function createRetentionProvider(httpClient: HttpClient = defaultHttpClient) {
  return {
    report: async (fresh = false) => (await httpClient<RetentionReport>(retentionEndpoints.report(fresh))).data as RetentionReport,
    prune: async () => (await httpClient<PruneStart>(retentionEndpoints.prune, { method: 'POST' })).data as PruneStart,
  };
}

export type RetentionProvider = ReturnType<typeof createRetentionProvider>;
export const retentionProvider = createRetentionProvider();
