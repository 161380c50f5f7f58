// URL builders for the console API. Components never build URLs themselves.
export type ResourceName = 'channel' | 'token' | 'redemption' | 'user' | 'log';

const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

export const endpoints = {
  list: (resource: string, page0: number, params: Record<string, string | number | undefined> = {}) => `/api/${resource}/${query({ p: page0, ...params })}`,
  search: (resource: string, keyword: string, params: Record<string, string | number | undefined> = {}) => `/api/${resource}/search${query({ keyword, ...params })}`,
  bulk: (resource: string) => `/api/${resource}/bulk`,
  channelJob: (id: string) => `/api/channel/jobs/${encodeURIComponent(id)}`,
  one: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}`,
  collection: (resource: string) => `/api/${resource}/`,
  // one-api's channel API tells a status-only change by its body ({id, status}), not by a flag
  statusOnly: (resource: string) => (resource === 'channel' ? '/api/channel/' : `/api/${resource}/?status_only=true`),
  remove: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}/`,
  logs: (admin: boolean, params: Record<string, string | number | undefined>) => `/api/log/${admin ? '' : 'self/'}${query(params)}`,
  logStat: (admin: boolean, params: Record<string, string | number | undefined>) => `/api/log/${admin ? 'stat' : 'self/stat'}${query(params)}`,
  channelTest: (id?: string | number) => (id === undefined ? '/api/channel/test' : `/api/channel/test/${encodeURIComponent(String(id))}/`),
  channelBalance: (id?: string | number) =>
    id === undefined ? '/api/channel/update_balance' : `/api/channel/update_balance/${encodeURIComponent(String(id))}/`,
  channelModels: '/api/channel/models',
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
  logout: '/api/user/logout',
  register: (turnstile?: string) => `/api/user/register${query({ turnstile })}`,
  self: '/api/user/self',
  verification: (email: string, turnstile?: string) => `/api/verification${query({ email, turnstile })}`,
  resetPassword: (email: string, turnstile?: string) => `/api/reset_password${query({ email, turnstile })}`,
  confirmReset: '/api/user/reset',
  githubOAuth: (code: string, state: string) => `/api/oauth/github${query({ code, state })}`,
  oauthState: '/api/oauth/state',
  wechatBind: (code: string) => `/api/oauth/wechat/bind${query({ code })}`,
  wechatOAuth: (code: string) => `/api/oauth/wechat${query({ code })}`,
  options: '/api/option/',
  secretKey: (resource: string, id: string | number) => `/api/${resource}/${encodeURIComponent(String(id))}/key`,
  topUp: '/api/user/topup',
  manageUser: '/api/user/manage',
  accessToken: '/api/user/token',
  affCode: '/api/user/aff',
  bindEmail: (email: string, code: string) => `/api/oauth/email/bind${query({ email, code })}`,
  dashboard: (admin: boolean, params: Record<string, string | number | undefined>) => `/api/dashboard${admin ? '/admin' : ''}${query(params)}`,
};
