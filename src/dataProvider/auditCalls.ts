// The audit log's calls beyond its list (the list and search are crud.ts's,
// with AUDIT_FILTERS as their facets): the chain's status and the CSV
// export's URL, which the page opens as a download (the session cookie goes
// with it, as with any same-site link).
import type { AuditChainStatus } from '../../common/audit';
import { endpoints } from './endpoints';
import type { HttpClient } from './httpClient';

/** The filters the audit list, search and export send (the server's `/api/audit/` query). */
export const AUDIT_FILTERS = [
  'user_id',
  'username',
  'action',
  'target_type',
  'target_id',
  'success',
  'start_timestamp',
  'end_timestamp',
] as const;

/** The list's filter values that the export takes, as query parameters; empty ones left out. */
export function auditFilterParams(filter: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    AUDIT_FILTERS.filter((key) => filter[key] !== undefined && filter[key] !== null && filter[key] !== '').map((key) => [
      key,
      String(filter[key]),
    ]),
  );
}

/**
 * The URL of the CSV of every row within `filter`: not a call (the browser downloads it), so not a method of
 * the data provider, whose methods react-admin expects to answer with a promise.
 */
export const auditExportUrl = (filter: Record<string, unknown>) => endpoints.auditExport(auditFilterParams(filter));

export function auditCalls(httpClient: HttpClient) {
  return {
    /** Walks the chain on the server: intact, or where it breaks. */
    auditChainStatus: async (signal?: AbortSignal) =>
      (await httpClient<AuditChainStatus>(endpoints.auditVerify, { signal })).data as AuditChainStatus,
  };
}
