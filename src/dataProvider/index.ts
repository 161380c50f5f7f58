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
//   task resource   → GET /api/task/?p=&page_size=&kind=&status=&user_id=
//                     (non-admins: GET /api/task/self?p=&page_size=&kind=&status=)
// cancelTask        → POST /api/task/{id}/cancel      → the task as it is now (the owner or an admin)
//                     taskUrls (beside the provider): /api/task/{id}/content[?download=1], /api/task/{id}/files/{output|error}
// getOne            → GET /api/{resource}/{id}
// getMany           → getOne for each id
// getManyReference  → getList with the target as a filter
// create            → POST /api/{resource}/            body: the record
//   token with organization_id → POST /api/organization/{organization_id}/token (a key spending its money)
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
// startOidc         → GET /api/oauth/oidc/start → the provider's authorization URL
// oidcOAuth         → GET /api/oauth/oidc?code=&state=&iss=
// wechatLogin       → GET /api/oauth/wechat?code=
// wechatBind        → GET /api/oauth/wechat/bind?code=
// createRedemptions → POST /api/redemption/           body: { name, quota, count } → keys
// testChannel       → GET /api/channel/test/{id}/?model= → { success, message, time, slow, model, reply, key, key_index, auto_disable } (seconds, top-level; key masked)
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
// getSetupChecklist → GET /api/setup/checklist          (root) → SetupChecklist: the first-run steps and the dismissal
// dismissSetupChecklist → POST /api/setup/checklist/dismiss (root)
// loginSecondFactor → POST /api/user/login/2fa        body: { code }  (after login answered two_factor_required)
// twoFactorStatus   → GET /api/user/2fa                → { enabled, pending, recovery_codes_left, required }
// twoFactorEnrol    → POST /api/user/2fa/enrol         → { secret, otpauth_url, qr_code }
// twoFactorConfirm  → POST /api/user/2fa/confirm       body: { code } → { recovery_codes }
// twoFactorDisable  → POST /api/user/2fa/disable       body: { code } (TOTP or recovery code)
// userTwoFactor     → GET /api/user/{id}/2fa           (root) → { enabled, recovery_codes_left, passkeys }
// resetUserTwoFactor → POST /api/user/{id}/2fa/reset   (root; removes the passkeys too)
//   audit resource  → GET /api/audit/?p=&page_size=&user_id=&username=&action=&target_type=&target_id=&success=
//                       &start_timestamp=&end_timestamp=  (filter.q: GET /api/audit/search?keyword=&...) (admin)
// auditChainStatus  → GET /api/audit/verify             → { intact, rows, head_seq, anchor_seq, broken_at? }
// auditExportUrl (a function beside the provider) → /api/audit/export?{the list's filters}: a URL the page downloads (CSV)
// listPasskeys      → GET /api/user/passkey            → the caller's passkeys (PasskeyRecord[])
// addPasskey        → POST /api/user/passkey/register/options → WebAuthn creation options; the browser's
//                     ceremony; POST /api/user/passkey/register/verify  body: { name, credential } → the passkeys
// removePasskey     → DELETE /api/user/passkey/{id}
// loginWithPasskey  → POST /api/passkey/login/options → WebAuthn request options; the browser's ceremony;
//                     POST /api/passkey/login/verify  body: { credential } → the session user (a passkey alone,
//                     or the second step after a password)
// listOrganizations → GET /api/organization/?p=0&page_size=100 (admins; with a keyword: /api/organization/search?keyword=)
// myOrganizations   → GET /api/organization/self       → the caller's organisations, with their role in each
// getOrganization   → GET /api/organization/{id}
// create/updateOrganization → POST / PUT /api/organization/   body: { name, owner } / { id, name?, owner?, status? }
// deleteOrganization → DELETE /api/organization/{id}
// topUpOrganization → POST /api/organization/{id}/topup  body: { quota } → the balance
// organizationMembers → GET /api/organization/{id}/member?p=0&page_size=100
// add/setOrganizationMember(Role) → POST / PUT /api/organization/{id}/member  body: { username, role } / { user_id, role }
// removeOrganizationMember → DELETE /api/organization/{id}/member/{userId}
// organizationKeys  → GET /api/organization/{id}/token?p=0&page_size=100
// createOrganizationKey → POST /api/organization/{id}/token  body: a token's fields and { service }
// setOrganizationKeyStatus → PUT /api/organization/{id}/token  body: { id, status }
// revealOrganizationKey → GET /api/organization/{id}/token/{tokenId}/key
// deleteOrganizationKey → DELETE /api/organization/{id}/token/{tokenId}
// organizationUsage → GET /api/organization/{id}/usage?start_timestamp=&end_timestamp= → OrganizationUsage
//
// Resources one-api never had (marked simpleRest in src/resources: webhook,
// webhook_delivery; the registry hands their names to createDataProvider, see
// src/consoleDataProvider.ts) go to ra-data-simple-rest over restClient, in its convention:
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
import type { DataProvider } from 'react-admin';
import type { ChannelJob } from '../../common/listQuery';
import type { AdminDashboard, Dashboard, DashboardQuery } from '../../common/dashboard';
import type { LogFilter } from '../../common/records';
import type { SetupChecklist } from '../../common/setupChecklist';
import { ITEMS_PER_PAGE } from '../../common/version';
import type { WebhookDeliveryRecord } from '../../common/webhooks';
import { endpoints } from './endpoints';
import { httpClient as defaultHttpClient, restClient as defaultRestClient, type HttpClient, type RestClient } from './httpClient';
import { simpleRestOver } from './simpleRest';
import { crudMethods, logFilters } from './crud';

export { listParams, numericId } from './crud';
import { accountCalls, sessionCalls } from './accountCalls';
import { channelCalls } from './channelCalls';
import { auditCalls } from './auditCalls';

export { auditExportUrl } from './auditCalls';
import { passkeyCalls } from './passkeyCalls';
import { organizationCalls } from './organizationCalls';
import { taskCalls } from './taskCalls';

export { taskUrls } from './taskCalls';

export const PAGE_SIZE = ITEMS_PER_PAGE;
export type { ChannelJob };

export interface OptionRow {
  key: string;
  value: string;
  set?: boolean;
}

/** The log page's filters, as the list keeps them and the stat line reuses them. */
export type { LogFilter };

export type { ChannelTestResult } from './channelCalls';

/** A dashboard query as URL parameters (common/dashboard.ts); absent filters are left out. */
function dashboardParams(dashboardQuery: DashboardQuery): Record<string, string | number | undefined> {
  const { start, end, granularity, user_id, token_id, model, channel_id } = dashboardQuery;
  return { start, end, granularity, user_id, token_id, model, channel_id };
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

/**
 * The data provider over the console API. `simpleRestResources` names the resources served in
 * ra-data-simple-rest's convention (the registry's, handed in by src/consoleDataProvider.ts); without
 * them every resource takes one-api's wire format.
 */
export function createDataProvider(
  httpClient: HttpClient = defaultHttpClient,
  restClient: RestClient = defaultRestClient,
  simpleRestResources: Iterable<string> = [],
) {
  const simpleRest = simpleRestOver(restClient);
  const simpleRestNames: ReadonlySet<string> = new Set(simpleRestResources);
  const isSimpleRest = (resource: string) => simpleRestNames.has(resource);
  const provider = {
    supportAbortSignal: true,
    ...crudMethods(httpClient),
    ...sessionCalls(httpClient),
    ...accountCalls(httpClient),
    ...channelCalls(httpClient),
    ...auditCalls(httpClient),
    ...passkeyCalls(httpClient),
    ...organizationCalls(httpClient),
    ...taskCalls(httpClient),
    /** Creates `count` codes; resolves to their keys. */
    createRedemptions: async (payload: { name: string; quota: number; count: number }) =>
      (await httpClient<string[]>(endpoints.collection('redemption'), { method: 'POST', body: payload })).data ?? [],
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
    /** The first-run checklist of root's dashboard. */
    getSetupChecklist: async (signal?: AbortSignal) =>
      (await httpClient<SetupChecklist>(endpoints.setupChecklist, { signal })).data as SetupChecklist,
    /** Hides the first-run checklist (until every channel is deleted). */
    dismissSetupChecklist: async () => {
      await httpClient(endpoints.setupChecklistDismiss, { method: 'POST' });
    },
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
/**
 * The typed calls for pages, settings and the auth provider (login, options, channel tests...). It
 * is told no simple-REST resource: react-admin's screens get src/consoleDataProvider.ts's, which is.
 */
export const dataProvider = createDataProvider();
