// The react-admin CRUD methods in one-api's wire format (the first half of the map atop
// index.ts): list pages with partial pagination, searches, facets, the log's filters, bulk
// status changes and deletions, and the status-only update.
import {
  HttpError,
  type CreateParams,
  type DeleteParams,
  type GetListParams,
  type GetListResult,
  type GetManyParams,
  type GetOneParams,
  type Identifier,
  type RaRecord,
  type DataProvider,
  type UpdateParams,
} from 'react-admin';
import { DEFAULT_SORT, SORTABLE_COLUMNS, type BulkAction, type BulkResult, type ListResource } from '../../common/listQuery';
import { isAdmin } from '../../common/roles';
import { ITEMS_PER_PAGE as PAGE_SIZE } from '../../common/version';
import { readStoredUser } from './storage';
import { AUDIT_FILTERS } from './auditCalls';
import { endpoints } from './endpoints';
import { organizationEndpoints } from './organizationCalls';
import type { HttpClient } from './httpClient';

/** The facets each list sends beside the keyword (the server's schemas accept these). */
const FACETS: Record<string, readonly string[]> = {
  channel: ['status', 'type', 'group'],
  token: ['status'],
  redemption: ['status'],
  user: ['role', 'status'],
  audit: AUDIT_FILTERS,
  task: ['kind', 'status', 'user_id'],
};

/** Resources with a bulk endpoint (POST /api/{resource}/bulk). */
const BULK_RESOURCES = new Set(['channel', 'token', 'redemption']);

const present = (value: unknown) => value !== undefined && value !== null && value !== '';

/** The log list's filters as query parameters; user and channel only for admins. */
export function logFilters(filter: Record<string, unknown>, admin: boolean) {
  const pick = (key: string) => (present(filter[key]) ? String(filter[key]) : undefined);
  return {
    type: pick('type'),
    username: admin ? pick('username') : undefined,
    token_name: pick('token_name'),
    model_name: pick('model_name'),
    start_timestamp: pick('start_timestamp'),
    end_timestamp: pick('end_timestamp'),
    channel: admin ? pick('channel') : undefined,
    request_id: pick('request_id')?.trim() || undefined,
  };
}

/**
 * The sort and page size as query parameters, left out when they are the
 * server's defaults (id DESC, 10 rows), so an untouched list asks exactly
 * what one-api's console asks. A column the server does not sort by is not sent.
 */
export function listParams(
  resource: string,
  params: Pick<GetListParams, 'pagination' | 'sort'>,
  paged = true,
): Record<string, string | undefined> {
  const columns: readonly string[] = SORTABLE_COLUMNS[resource as ListResource] ?? [];
  const field = params.sort?.field;
  const order = params.sort?.order === 'ASC' ? 'asc' : 'desc';
  const sorted = field && columns.includes(field) && !(field === DEFAULT_SORT.field && order === DEFAULT_SORT.order);
  const perPage = params.pagination?.perPage ?? PAGE_SIZE;
  return {
    ...(paged && perPage !== PAGE_SIZE ? { page_size: String(perPage) } : {}),
    ...(sorted ? { sort: field, order } : {}),
  };
}

const facetsOf = (resource: string, filter: Record<string, unknown>) =>
  Object.fromEntries((FACETS[resource] ?? []).filter((key) => present(filter[key])).map((key) => [key, String(filter[key])]));

/** Where a create goes: a token that spends an organisation's money (`organization_id`) is made by that organisation. */
const createUrl = (resource: string, sent: Record<string, unknown>) =>
  resource === 'token' && Number(sent.organization_id) > 0
    ? organizationEndpoints.key(Number(sent.organization_id))
    : endpoints.collection(resource);

/** The bulk action a status change means (1 is enabled/unused everywhere; anything else disables). */
const bulkActionOf = (status: unknown): BulkAction => (Number(status) === 1 ? 'enable' : 'disable');

/** A record id as the server wants it: a number (react-admin takes ids from the URL, as strings). */
export function numericId(id: string | number): string | number {
  return typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
}

/** One page of a list (or a search's rows, not paginated by the server), with what is known of the total. */
async function listPage(httpClient: HttpClient, resource: string, params: GetListParams): Promise<GetListResult> {
  const page = params.pagination?.page ?? 1;
  const perPage = params.pagination?.perPage ?? PAGE_SIZE;
  const filter = (params.filter ?? {}) as Record<string, unknown>;
  const keyword = typeof filter.q === 'string' ? filter.q.trim() : '';
  let url: string;
  if (resource === 'log') {
    const admin = isAdmin(readStoredUser()?.role);
    url = endpoints.logs(admin, { p: page - 1, ...listParams(resource, params), ...logFilters(filter, admin) });
  } else if (resource === 'task') {
    const admin = isAdmin(readStoredUser()?.role);
    const { user_id: userId, ...facets } = facetsOf(resource, filter);
    url = endpoints.tasks(admin, { p: page - 1, ...listParams(resource, params), ...facets, user_id: admin ? userId : undefined });
  } else if (keyword) {
    url = endpoints.search(resource, keyword, { ...listParams(resource, params, false), ...facetsOf(resource, filter) });
  } else {
    url = endpoints.list(resource, page - 1, { ...listParams(resource, params), ...facetsOf(resource, filter) });
  }
  const { data } = await httpClient<RaRecord[]>(url, { signal: params.signal });
  const rows = (Array.isArray(data) ? data : []).map((row, index) =>
    // the self log endpoint sends id 0 on every row (as one-api does); a table needs distinct ids
    resource === 'log' && !row.id ? { ...row, id: `${page}-${index}` } : row,
  );
  if (keyword && resource !== 'log') {
    // searches are not paginated by the server
    return { data: rows, total: rows.length, pageInfo: { hasNextPage: false, hasPreviousPage: false } };
  }
  const hasNextPage = rows.length >= perPage;
  // on the last page the total is known exactly; before it, only that there is more
  return {
    data: rows,
    pageInfo: { hasNextPage, hasPreviousPage: page > 1 },
    ...(hasNextPage ? {} : { total: (page - 1) * perPage + rows.length }),
  };
}

/** getList ... deleteMany over `httpClient`, for the resources one-api had. */
export function crudMethods(httpClient: HttpClient) {
  const listOf = (resource: string, params: GetListParams) => listPage(httpClient, resource, params);

  /** One bulk request; when some ids failed, an error naming them (the others are done). */
  const bulk = async (resource: string, ids: Identifier[], action: BulkAction): Promise<Identifier[]> => {
    const { data } = await httpClient<BulkResult>(endpoints.bulk(resource), {
      method: 'POST',
      body: { ids: ids.map((id) => Number(numericId(id))), action },
    });
    const failed = data?.failed ?? [];
    if (failed.length) {
      const reasons = failed.map((failure) => `#${failure.id}: ${failure.message}`).join('; ');
      throw new HttpError(`Error: ${failed.length} of ${ids.length} not done (${reasons})`, 200, data);
    }
    return data?.done ?? [];
  };

  const getOne = async (resource: string, id: string | number, signal?: AbortSignal) => {
    const { data } = await httpClient<RaRecord>(endpoints.one(resource, id), { signal });
    return data as RaRecord;
  };

  return {
    getList: (resource, params) => listOf(resource, params),
    // react-admin's methods are generic in the record type their caller expects: the server's JSON is taken as it
    getOne: async <RecordType extends RaRecord = RaRecord>(resource: string, params: GetOneParams<RecordType>) => ({
      data: (await getOne(resource, params.id, params.signal)) as RecordType,
    }),
    getMany: async <RecordType extends RaRecord = RaRecord>(resource: string, params: GetManyParams<RecordType>) => ({
      data: (await Promise.all(params.ids.map((id) => getOne(resource, id, params.signal)))) as RecordType[],
    }),
    getManyReference: (resource, params) =>
      listOf(resource, { ...params, filter: { ...(params.filter as Record<string, unknown>), [params.target]: params.id } }),
    create: async <RecordType extends Omit<RaRecord, 'id'> = RaRecord, ResultRecordType extends RaRecord = RecordType & { id: Identifier }>(
      resource: string,
      params: CreateParams<Record<string, unknown>>,
    ) => {
      const sent = params.data as Record<string, unknown>;
      const { data } = await httpClient<RaRecord>(createUrl(resource, sent), { method: 'POST', body: params.data });
      // Several endpoints answer without the created record (redemptions: the keys;
      // channels: { ids }); keep what was sent, with what came back under `created`.
      const answered = data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
      const createdIds = Array.isArray(answered?.ids) ? (answered.ids as number[]) : [];
      const record = answered && 'id' in answered ? answered : { ...sent, id: sent.id ?? createdIds[0] ?? 0, created: data };
      return { data: record as ResultRecordType };
    },
    update: async <RecordType extends RaRecord = RaRecord>(resource: string, params: UpdateParams<RaRecord>) => {
      const statusOnly = Boolean((params.meta as { statusOnly?: unknown } | undefined)?.statusOnly);
      const id = numericId(params.id);
      const changes = params.data as Record<string, unknown>;
      const body = statusOnly ? { id, status: changes.status } : { ...changes, id };
      const { data } = await httpClient<RaRecord>(statusOnly ? endpoints.statusOnly(resource) : endpoints.collection(resource), {
        method: 'PUT',
        body,
      });
      return { data: { ...params.previousData, ...body, ...(data && typeof data === 'object' ? data : {}) } as RecordType };
    },
    updateMany: async (resource, params) => {
      const keys = Object.keys(params.data ?? {});
      if (BULK_RESOURCES.has(resource) && keys.length === 1 && keys[0] === 'status') {
        return { data: await bulk(resource, params.ids, bulkActionOf(params.data.status)) };
      }
      for (const id of params.ids) {
        await httpClient(endpoints.collection(resource), { method: 'PUT', body: { ...params.data, id: numericId(id) } });
      }
      return { data: params.ids };
    },
    delete: async <RecordType extends RaRecord = RaRecord>(resource: string, params: DeleteParams<RecordType>) => {
      await httpClient(endpoints.remove(resource, params.id), { method: 'DELETE' });
      return { data: (params.previousData ?? { id: params.id }) as RecordType };
    },
    deleteMany: async (resource, params) => {
      if (BULK_RESOURCES.has(resource)) return { data: await bulk(resource, params.ids, 'delete') };
      for (const id of params.ids) await httpClient(endpoints.remove(resource, id), { method: 'DELETE' });
      return { data: params.ids };
    },
  } satisfies Partial<DataProvider>;
}
