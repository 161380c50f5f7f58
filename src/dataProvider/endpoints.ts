// URL builders for the console API. Components never build URLs themselves.
import { stringify } from 'query-string';

export type ResourceName = 'channel' | 'token' | 'redemption' | 'user' | 'log';

/**
 * A query string in the order given (as one-api's console sends it), empty and
 * absent values left out except those named in `alwaysSent`, which go out
 * empty (`turnstile=`); spaces as `+` (form encoding, what the console sent
 * before query-string), so a search's URL did not change.
 */
const query = (params: Record<string, string | number | undefined>, alwaysSent: readonly string[] = []) => {
  const kept = Object.entries(params).flatMap(([key, value]) => {
    if (alwaysSent.includes(key)) return [[key, value ?? '']];
    return value === undefined || value === '' ? [] : [[key, value]];
  });
  const text = stringify(Object.fromEntries(kept) as Record<string, string | number>, { sort: false }).replace(/%20/g, '+');
  return text ? `?${text}` : '';
};

/** The bot check's token goes on every request that may need it, empty when the check is off (as one-api's console sends it). */
const withTurnstile = (params: Record<string, string | undefined>, turnstile = '') => query({ ...params, turnstile }, ['turnstile']);

export const endpoints = {
  list: (resource: string, page0: number, params: Record<string, string | number | undefined> = {}) =>
    `/api/${resource}/${query({ p: page0, ...params })}`,
  search: (resource: string, keyword: string, params: Record<string, string | number | undefined> = {}) =>
    `/api/${resource}/search${query({ keyword, ...params })}`,
  bulk: (resource: string) => `/api/${resource}/bulk`,
  channelJob: (id: string) => `/api/channel/jobs/${encodeURIComponent(id)}`,
  one: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}`,
  collection: (resource: string) => `/api/${resource}/`,
  // one-api's channel API tells a status-only change by its body ({id, status}), not by a flag
  statusOnly: (resource: string) => (resource === 'channel' ? '/api/channel/' : `/api/${resource}/?status_only=true`),
  remove: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}/`,
  logs: (admin: boolean, params: Record<string, string | number | undefined>) => `/api/log/${admin ? '' : 'self/'}${query(params)}`,
  tasks: (admin: boolean, params: Record<string, string | number | undefined>) => `/api/task/${admin ? '' : 'self'}${query(params)}`,
  logStat: (admin: boolean, params: Record<string, string | number | undefined>) =>
    `/api/log/${admin ? 'stat' : 'self/stat'}${query(params)}`,
  channelTest: (id?: string | number, model?: string) =>
    id === undefined ? '/api/channel/test' : `/api/channel/test/${encodeURIComponent(String(id))}/${query({ model })}`,
  channelBalance: (id?: string | number) =>
    id === undefined ? '/api/channel/update_balance' : `/api/channel/update_balance/${encodeURIComponent(String(id))}/`,
  channelModels: '/api/channel/models',
  // a multi-key channel's keys, and one of them (its test: as a channel's, `time` beside success and message)
  channelKeys: (id: string | number) => `/api/channel/${encodeURIComponent(String(id))}/keys`,
  channelKey: (id: string | number, keyId: number) => `/api/channel/${encodeURIComponent(String(id))}/keys/${keyId}`,
  channelKeyTest: (id: string | number, keyId: number) => `/api/channel/${encodeURIComponent(String(id))}/keys/${keyId}/test`,
  groups: '/api/group/',
  status: '/api/status',
  notice: '/api/notice',
  about: '/api/about',
  homePageContent: '/api/home_page_content',
  login: '/api/user/login',
  loginSecondFactor: '/api/user/login/2fa',
  twoFactor: '/api/user/2fa',
  twoFactorEnrol: '/api/user/2fa/enrol',
  twoFactorConfirm: '/api/user/2fa/confirm',
  twoFactorDisable: '/api/user/2fa/disable',
  userTwoFactor: (id: string | number) => `/api/user/${encodeURIComponent(String(id))}/2fa`,
  userTwoFactorReset: (id: string | number) => `/api/user/${encodeURIComponent(String(id))}/2fa/reset`,
  passkeys: '/api/user/passkey',
  passkey: (id: string | number) => `/api/user/passkey/${encodeURIComponent(String(id))}`,
  passkeyRegisterOptions: '/api/user/passkey/register/options',
  passkeyRegisterVerify: '/api/user/passkey/register/verify',
  passkeyLoginOptions: '/api/passkey/login/options',
  passkeyLoginVerify: '/api/passkey/login/verify',
  logout: '/api/user/logout',
  register: (turnstile?: string) => `/api/user/register${withTurnstile({}, turnstile)}`,
  self: '/api/user/self',
  pricing: '/api/pricing',
  verification: (email: string, turnstile?: string) => `/api/verification${withTurnstile({ email }, turnstile)}`,
  resetPassword: (email: string, turnstile?: string) => `/api/reset_password${withTurnstile({ email }, turnstile)}`,
  confirmReset: '/api/user/reset',
  githubOAuth: (code: string, state: string) => `/api/oauth/github${query({ code, state })}`,
  oauthState: '/api/oauth/state',
  oidcStart: '/api/oauth/oidc/start',
  oidcOAuth: (answer: Record<string, string | undefined>) =>
    `/api/oauth/oidc${query({ code: answer.code, state: answer.state, iss: answer.iss, error: answer.error, error_description: answer.error_description })}`,
  wechatBind: (code: string) => `/api/oauth/wechat/bind${query({ code })}`,
  wechatOAuth: (code: string) => `/api/oauth/wechat${query({ code })}`,
  options: '/api/option/',
  secretKey: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}/key`,
  topUp: '/api/user/topup',
  manageUser: '/api/user/manage',
  accessToken: '/api/user/token',
  affCode: '/api/user/aff',
  bindEmail: (email: string, code: string) => `/api/oauth/email/bind${query({ email, code })}`,
  // resources in ra-data-simple-rest's convention: its own URLs, plus these actions
  webhookTest: (id: string | number) => `/api/webhook/${encodeURIComponent(String(id))}/test`,
  redeliver: (id: string | number) => `/api/webhook_delivery/${encodeURIComponent(String(id))}/redeliver`,
  dashboard: (admin: boolean, params: Record<string, string | number | undefined>) =>
    `/api/dashboard${admin ? '/admin' : ''}${query(params)}`,
  auditVerify: '/api/audit/verify',
  auditExport: (params: Record<string, string | number | undefined>) => `/api/audit/export${query(params)}`,
  setupChecklist: '/api/setup/checklist',
  setupChecklistDismiss: '/api/setup/checklist/dismiss',
};
