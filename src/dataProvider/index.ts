// The react-admin data provider over Switchboard's console API.
//
// Method            → request
// getList           → GET /api/{resource}/?p={page-1}&page_size=&sort=&order=&{facets}
//                     (filter.q: GET /api/{resource}/search?keyword={q}&sort=&order=&{facets})
//                     page_size only when not 10, sort/order only when not id DESC: the
//                     default list asks exactly what one-api's console asks. Facets:
//                     channel status, type, group; token and redemption status; user role, status.
//   log resource    → GET /api/log/?p=&page_size=&sort=&order=&type=&username=&token_name=&model_name=
//                       &start_timestamp=&end_timestamp=&channel=&request_id=
//                     (non-admins: GET /api/log/self/?... without username and channel)
// getOne            → GET /api/{resource}/{id}
// getMany           → getOne for each id
// getManyReference  → getList with the target as a filter
// create            → POST /api/{resource}/            body: the record
// update            → PUT /api/{resource}/             body: { ...record, id }
//   status only     → PUT /api/{resource}/?status_only=true  body: { id, status } (meta.statusOnly)
//   channel         → PUT /api/channel/                body: { id, status } (no flag: the body tells)
// updateMany        → channel, token, redemption with data.status only:
//                       POST /api/{resource}/bulk  body: { ids, action: enable|disable }
//                     others: update for each id
// delete            → DELETE /api/{resource}/{id}/
// deleteMany        → channel, token, redemption: POST /api/{resource}/bulk  body: { ids, action: delete }
//                     others: delete for each id
// revealKey         → GET /api/{token|redemption}/{id}/key
// topUp             → POST /api/user/topup            body: { key }
// manageUser        → POST /api/user/manage           body: { username, action }
// generateAccessToken → GET /api/user/token
// getAffCode        → GET /api/user/aff
// bindEmail         → GET /api/oauth/email/bind?email=&code=
// getOAuthState     → GET /api/oauth/state
// githubOAuth       → GET /api/oauth/github?code=&state=
// wechatLogin       → GET /api/oauth/wechat?code=
// wechatBind        → GET /api/oauth/wechat/bind?code=
// createRedemptions → POST /api/redemption/           body: { name, quota, count } → keys
// testChannel       → GET /api/channel/test/{id}/?model= → { success, message, time, slow } (seconds, top-level)
// testAllChannels   → GET /api/channel/test             → the job (also the one already running)
// updateChannelBalance → GET /api/channel/update_balance/{id}/ → balance (top-level)
// updateAllChannelBalances → GET /api/channel/update_balance → the job (as test all)
// channelJob        → GET /api/channel/jobs/{id}        → { state, done, total, failures }
// channelModels     → GET /api/channel/models           (no envelope: { object, data: [{ id }] })
// channelKeys       → GET /api/channel/{id}/keys        → the keys of a multi-key channel, masked
// addChannelKeys    → POST /api/channel/{id}/keys       body: { keys } (one per line, or a JSON array) → { added, skipped }
// setChannelKeyStatus → PUT /api/channel/{id}/keys/{keyId}  body: { status } → the key, masked
// deleteChannelKey  → DELETE /api/channel/{id}/keys/{keyId}
// testChannelKey    → GET /api/channel/{id}/keys/{keyId}/test → { success, message, time } (as testChannel)
// groups            → GET /api/group/                   → group names
// logStat           → GET /api/log/stat?type=&username=&token_name=&model_name=&start_timestamp=&end_timestamp=
//                     (non-admins: GET /api/log/self/stat?... without username) → { quota, token }
// getDashboard      → GET /api/dashboard?start=&end=&granularity=&token_id=&model=   → Dashboard
// getAdminDashboard → GET /api/dashboard/admin?...&user_id=&channel_id=             → AdminDashboard
// loginSecondFactor → POST /api/user/login/2fa        body: { code }  (after login answered two_factor_required)
// twoFactorStatus   → GET /api/user/2fa                → { enabled, pending, recovery_codes_left, required }
// twoFactorEnrol    → POST /api/user/2fa/enrol         → { secret, otpauth_url, qr_code }
// twoFactorConfirm  → POST /api/user/2fa/confirm       body: { code } → { recovery_codes }
// twoFactorDisable  → POST /api/user/2fa/disable       body: { code } (TOTP or recovery code)
// userTwoFactor     → GET /api/user/{id}/2fa           (root) → { enabled, recovery_codes_left }
// resetUserTwoFactor → POST /api/user/{id}/2fa/reset   (root)
//
// Resources one-api never had (marked simpleRest in src/resources: webhook,
// webhook_delivery) go to ra-data-simple-rest over restClient, in its convention:
// getList           → GET /api/{resource}?sort=["field","ASC"]&range=[0,24]&filter={...}
//                     (total from Content-Range: {resource} 0-24/319)
// getOne            → GET /api/{resource}/{id}
// getMany           → GET /api/{resource}?filter={"id":[1,2]}
// getManyReference  → GET /api/{resource}?filter={...,"{target}":{id}}&sort=&range=
// create            → POST /api/{resource}           body: the record
// update(Many)      → PUT /api/{resource}/{id}       body: the record (once per id)
// delete(Many)      → DELETE /api/{resource}/{id}    (once per id)
// sendTestWebhook   → POST /api/webhook/{id}/test     → the delivery queued
// redeliverWebhook  → POST /api/webhook_delivery/{id}/redeliver → the new delivery
//
// Query strings are built with query-string (the copy ra-core uses) everywhere.
// The API returns no totals: lists use partial pagination (a full page means
// there may be another; a shorter page is the last, so its total is known).
import {
  HttpError,
  type CreateParams,
  type DataProvider,
  type DeleteParams,
  type GetListParams,
  type GetListResult,
  type GetManyParams,
  type GetOneParams,
  type Identifier,
  type RaRecord,
  type UpdateParams,
} from 'react-admin';
import type { Envelope } from '../../common/envelope';
import {
  DEFAULT_SORT,
  SORTABLE_COLUMNS,
  type BulkAction,
  type BulkResult,
  type ChannelJob,
  type ListResource,
} from '../../common/listQuery';
import { isAdmin } from '../../common/roles';
import type { AdminDashboard, Dashboard, DashboardQuery } from '../../common/dashboard';
import type { ClientStatus } from '../../common/options';
import type { ModelPrice } from '../../common/pricing';
import type {
  ChannelKeyRecord,
  LoginPayload,
  RegisterPayload,
  SessionUser,
  TwoFactorEnrolment,
  TwoFactorStatus,
  UserRecord,
  LogFilter,
} from '../../common/records';
import { ITEMS_PER_PAGE } from '../../common/version';
import { readStoredUser } from '../authProvider/storage';
import type { WebhookDeliveryRecord } from '../../common/webhooks';
import { endpoints } from './endpoints';
import { httpClient as defaultHttpClient, restClient as defaultRestClient, type HttpClient, type RestClient } from './httpClient';
import { isSimpleRest, simpleRestOver } from './simpleRest';

export const PAGE_SIZE = ITEMS_PER_PAGE;
export type { ChannelJob };

/** The facets each list sends beside the keyword (the server's schemas accept these). */
const FACETS: Record<string, readonly string[]> = {
  channel: ['status', 'type', 'group'],
  token: ['status'],
  redemption: ['status'],
  user: ['role', 'status'],
};

/** Resources with a bulk endpoint (POST /api/{resource}/bulk). */
const BULK_RESOURCES = new Set(['channel', 'token', 'redemption']);

export interface OptionRow {
  key: string;
  value: string;
  set?: boolean;
}

/** The log page's filters, as the list keeps them and the stat line reuses them. */
export type { LogFilter };

/** One channel test: a failed test also reports how long it took, and the server keeps that time. */
export interface ChannelTestResult {
  success: boolean;
  message: string;
  /** Seconds. */
  time: number;
  /** True when the upstream answered, but slower than the channel type's threshold. */
  slow?: boolean;
}

type TimedEnvelope = Envelope & { time?: number; balance?: number; slow?: boolean };

/** A dashboard query as URL parameters (common/dashboard.ts); absent filters are left out. */
function dashboardParams(dashboardQuery: DashboardQuery): Record<string, string | number | undefined> {
  const { start, end, granularity, user_id, token_id, model, channel_id } = dashboardQuery;
  return { start, end, granularity, user_id, token_id, model, channel_id };
}

const present = (value: unknown) => value !== undefined && value !== null && value !== '';

function logFilters(filter: Record<string, unknown>, admin: boolean) {
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

/** The bulk action a status change means (1 is enabled/unused everywhere; anything else disables). */
const bulkActionOf = (status: unknown): BulkAction => (Number(status) === 1 ? 'enable' : 'disable');

/** A record id as the server wants it: a number (react-admin takes ids from the URL, as strings). */
export function numericId(id: string | number): string | number {
  return typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
}

/** The CRUD methods, each handed to ra-data-simple-rest for its resources. */
const CRUD_METHODS = [
  'getList',
  'getOne',
  'getMany',
  'getManyReference',
  'create',
  'update',
  'updateMany',
  'delete',
  'deleteMany',
] as const;

export function createDataProvider(httpClient: HttpClient = defaultHttpClient, restClient: RestClient = defaultRestClient) {
  const simpleRest = simpleRestOver(restClient);
  /** A channel's or a key's test: a failed test also comes with its time, beside success and message. */
  const timedTest = async (url: string): Promise<ChannelTestResult> => {
    try {
      const envelope = (await httpClient(url)) as TimedEnvelope;
      return { success: true, message: envelope.message, time: Number(envelope.time ?? 0) };
    } catch (error) {
      const body = (error as HttpError).body as TimedEnvelope | undefined;
      if (body?.success === false && typeof body.time === 'number')
        return { success: false, message: body.message, time: body.time, ...(body.slow ? { slow: true } : {}) };
      throw error;
    }
  };
  const listOf = async (resource: string, params: GetListParams): Promise<GetListResult> => {
    const page = params.pagination?.page ?? 1;
    const perPage = params.pagination?.perPage ?? PAGE_SIZE;
    const filter = (params.filter ?? {}) as Record<string, unknown>;
    const keyword = typeof filter.q === 'string' ? filter.q.trim() : '';
    let url: string;
    if (resource === 'log') {
      const admin = isAdmin(readStoredUser()?.role);
      url = endpoints.logs(admin, { p: page - 1, ...listParams(resource, params), ...logFilters(filter, admin) });
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
  };

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

  /** A job start answers the job, also when refused because one is already running (then that one is followed). */
  const startJob = async (url: string): Promise<ChannelJob> => {
    try {
      return (await httpClient<ChannelJob>(url)).data as ChannelJob;
    } catch (error) {
      const body = (error as HttpError).body as Envelope<ChannelJob> | undefined;
      if (body?.data?.id) return body.data;
      throw error;
    }
  };

  const getOne = async (resource: string, id: string | number, signal?: AbortSignal) => {
    const { data } = await httpClient<RaRecord>(endpoints.one(resource, id), { signal });
    return data as RaRecord;
  };

  const provider = {
    supportAbortSignal: true,
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
      const { data } = await httpClient<RaRecord>(endpoints.collection(resource), { method: 'POST', body: params.data });
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

    // Non-CRUD calls, typed.
    getStatus: async () => (await httpClient<ClientStatus>(endpoints.status)).data as ClientStatus,
    getNotice: async () => (await httpClient<string>(endpoints.notice)).data ?? '',
    getAbout: async () => (await httpClient<string>(endpoints.about)).data ?? '',
    getHomePageContent: async () => (await httpClient<string>(endpoints.homePageContent)).data ?? '',
    login: async (payload: LoginPayload) =>
      (await httpClient<SessionUser>(endpoints.login, { method: 'POST', body: payload })).data as SessionUser,
    logout: async () => {
      await httpClient(endpoints.logout);
    },
    loginSecondFactor: async (code: string) =>
      (await httpClient<SessionUser & { recovery_codes_left?: number }>(endpoints.loginSecondFactor, { method: 'POST', body: { code } }))
        .data as SessionUser & {
        recovery_codes_left?: number;
      },
    twoFactorStatus: async () => (await httpClient<TwoFactorStatus>(endpoints.twoFactor)).data as TwoFactorStatus,
    twoFactorEnrol: async () =>
      (await httpClient<TwoFactorEnrolment>(endpoints.twoFactorEnrol, { method: 'POST' })).data as TwoFactorEnrolment,
    twoFactorConfirm: async (code: string) =>
      (await httpClient<{ recovery_codes: string[] }>(endpoints.twoFactorConfirm, { method: 'POST', body: { code } })).data
        ?.recovery_codes ?? [],
    twoFactorDisable: async (code: string) => {
      await httpClient(endpoints.twoFactorDisable, { method: 'POST', body: { code } });
    },
    userTwoFactor: async (id: Identifier) =>
      (await httpClient<{ enabled: boolean; recovery_codes_left: number }>(endpoints.userTwoFactor(id))).data as {
        enabled: boolean;
        recovery_codes_left: number;
      },
    resetUserTwoFactor: async (id: Identifier) => {
      await httpClient(endpoints.userTwoFactorReset(id), { method: 'POST' });
    },
    register: async (payload: RegisterPayload, turnstile?: string) => {
      await httpClient(endpoints.register(turnstile), { method: 'POST', body: payload });
    },
    getSelf: async () => (await httpClient<UserRecord>(endpoints.self)).data as UserRecord,
    /** The models of the caller's group with their prices in US$ per million tokens. */
    getPricing: async () => (await httpClient<ModelPrice[]>(endpoints.pricing)).data ?? [],
    updateSelf: async (changes: { username?: string; display_name?: string; password?: string; original_password?: string }) => {
      await httpClient(endpoints.self, { method: 'PUT', body: changes });
    },
    deleteSelf: async () => {
      await httpClient(endpoints.self, { method: 'DELETE' });
    },
    sendVerificationCode: async (email: string, turnstile?: string) => {
      await httpClient(endpoints.verification(email, turnstile));
    },
    sendPasswordReset: async (email: string, turnstile?: string) => {
      await httpClient(endpoints.resetPassword(email, turnstile));
    },
    confirmPasswordReset: async (email: string, token: string) =>
      (await httpClient<string>(endpoints.confirmReset, { method: 'POST', body: { email, token } })).data ?? '',
    /** A one-time `state` for the GitHub authorize URL (also kept in an HttpOnly cookie). */
    getOAuthState: async () => (await httpClient<string>(endpoints.oauthState)).data ?? '',
    wechatBind: async (code: string) => {
      await httpClient(endpoints.wechatBind(code));
    },
    githubOAuth: async (code: string, state: string) => {
      const envelope = await httpClient<SessionUser>(endpoints.githubOAuth(code, state));
      return { message: envelope.message, user: envelope.data };
    },
    wechatLogin: async (code: string) => (await httpClient<SessionUser>(endpoints.wechatOAuth(code))).data as SessionUser,
    /** The full key of a token or redemption code (lists only carry masked keys). */
    revealKey: async (resource: 'token' | 'redemption', id: string | number) =>
      (await httpClient<string>(endpoints.secretKey(resource, id))).data ?? '',
    /** Redeems a code; resolves to the quota added. */
    topUp: async (key: string) => Number((await httpClient<number>(endpoints.topUp, { method: 'POST', body: { key } })).data ?? 0),
    manageUser: async (username: string, action: 'promote' | 'demote' | 'delete' | 'enable' | 'disable') =>
      (
        await httpClient<{ role: number; status: number; deleted?: boolean }>(endpoints.manageUser, {
          method: 'POST',
          body: { username, action },
        })
      ).data!,
    generateAccessToken: async () => (await httpClient<string>(endpoints.accessToken)).data ?? '',
    bindEmail: async (email: string, code: string) => {
      await httpClient(endpoints.bindEmail(email, code));
    },
    getAffCode: async () => (await httpClient<string>(endpoints.affCode)).data ?? '',
    /** Creates `count` codes; resolves to their keys. */
    createRedemptions: async (payload: { name: string; quota: number; count: number }) =>
      (await httpClient<string[]>(endpoints.collection('redemption'), { method: 'POST', body: payload })).data ?? [],
    /** `model`: one of the channel's models; absent, the server tests its test model (or first). */
    testChannel: (id: string | number, model?: string) => timedTest(endpoints.channelTest(id, model)),
    channelKeys: async (id: string | number) => (await httpClient<ChannelKeyRecord[]>(endpoints.channelKeys(id))).data ?? [],
    addChannelKeys: async (id: string | number, keys: string) =>
      (await httpClient<{ added: number; skipped: number }>(endpoints.channelKeys(id), { method: 'POST', body: { keys } })).data ?? {
        added: 0,
        skipped: 0,
      },
    setChannelKeyStatus: async (id: string | number, keyId: number, status: number) =>
      (await httpClient<ChannelKeyRecord>(endpoints.channelKey(id, keyId), { method: 'PUT', body: { status } })).data as ChannelKeyRecord,
    deleteChannelKey: async (id: string | number, keyId: number) => {
      await httpClient(endpoints.channelKey(id, keyId), { method: 'DELETE' });
    },
    testChannelKey: (id: string | number, keyId: number) => timedTest(endpoints.channelKeyTest(id, keyId)),
    /** Starts testing every enabled channel; resolves to the job to follow with channelJob. */
    testAllChannels: () => startJob(endpoints.channelTest()),
    /** Asks the upstream for the channel's balance; resolves to it (unit per channel type). */
    updateChannelBalance: async (id: string | number) =>
      Number(((await httpClient(endpoints.channelBalance(id))) as TimedEnvelope).balance ?? 0),
    /** Starts refreshing every enabled channel's balance; resolves to the job. */
    updateAllChannelBalances: () => startJob(endpoints.channelBalance()),
    channelJob: async (id: string) => (await httpClient<ChannelJob>(endpoints.channelJob(id))).data as ChannelJob,
    channelModels: async () =>
      ((await httpClient<{ data?: Array<{ id: string }> }>(endpoints.channelModels)).data?.data ?? []).map((model) => model.id),
    groups: async () => (await httpClient<string[]>(endpoints.groups)).data ?? [],
    /** Quota (and tokens) consumed within the filters; the type filter does not apply. */
    logStat: async (filter: LogFilter, admin: boolean) => {
      const { data } = await httpClient<{ quota?: number; token?: number }>(
        endpoints.logStat(admin, logFilters(filter as Record<string, unknown>, admin)),
      );
      return { quota: Number(data?.quota ?? 0), token: Number(data?.token ?? 0) };
    },
    /** The caller's own usage (user_id and channel_id are admin filters: never sent here). */
    getDashboard: async (dashboardQuery: DashboardQuery, signal?: AbortSignal) =>
      (
        await httpClient<Dashboard>(
          endpoints.dashboard(false, { ...dashboardParams(dashboardQuery), user_id: undefined, channel_id: undefined }),
          { signal },
        )
      ).data as Dashboard,
    /** Every user's usage with the admin sections (admin and root). */
    getAdminDashboard: async (dashboardQuery: DashboardQuery, signal?: AbortSignal) =>
      (await httpClient<AdminDashboard>(endpoints.dashboard(true, dashboardParams(dashboardQuery)), { signal })).data as AdminDashboard,
    getOptions: async () => (await httpClient<OptionRow[]>(endpoints.options)).data ?? [],
    updateOption: async (key: string, value: string) => {
      await httpClient(endpoints.options, { method: 'PUT', body: { key, value } });
    },
    /** Queues a webhook.test event for one webhook; resolves to its delivery. */
    sendTestWebhook: async (id: string | number) =>
      (await restClient(endpoints.webhookTest(id), { method: 'POST', body: '{}' })).json as WebhookDeliveryRecord,
    /** Sends a delivery's event again, as a new delivery. */
    redeliverWebhook: async (id: string | number) =>
      (await restClient(endpoints.redeliver(id), { method: 'POST', body: '{}' })).json as WebhookDeliveryRecord,
  } satisfies DataProvider & Record<string, unknown>;
  for (const method of CRUD_METHODS) {
    const own = provider[method] as (resource: string, params: unknown) => Promise<unknown>;
    const rest = simpleRest[method] as (resource: string, params: unknown) => Promise<unknown>;
    (provider as Record<string, unknown>)[method] = (resource: string, params: unknown) =>
      isSimpleRest(resource) ? rest(resource, params) : own(resource, params);
  }
  return provider;
}

export type SwitchboardDataProvider = ReturnType<typeof createDataProvider>;
export const dataProvider = createDataProvider();
