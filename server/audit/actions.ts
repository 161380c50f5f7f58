// The names audit rows give the calls worth a name (sign-ins, 2FA changes,
// key reveals, settings, imports, the records' create, update and delete),
// by method and route pattern; any other call is named `METHOD route`. The
// target's type is the route's first word after /api/ unless named here.

/** `METHOD route` → [action, target type]. */
const NAMED_ACTIONS: Record<string, readonly [string, string]> = {
  'POST /api/user/login': ['user.login', 'user'],
  'POST /api/user/login/2fa': ['user.login_2fa', 'user'],
  'GET /api/user/logout': ['user.logout', 'user'],
  'POST /api/user/register': ['user.register', 'user'],
  'POST /api/user/reset': ['user.password_reset', 'user'],
  'GET /api/oauth/github': ['user.login_github', 'user'],
  'GET /api/oauth/wechat': ['user.login_wechat', 'user'],
  'GET /api/user/token': ['user.access_token_rotate', 'user'],
  'PUT /api/user/self': ['user.self_update', 'user'],
  'DELETE /api/user/self': ['user.self_delete', 'user'],
  'POST /api/user/': ['user.create', 'user'],
  'PUT /api/user/': ['user.update', 'user'],
  'DELETE /api/user/:id': ['user.delete', 'user'],
  'POST /api/user/manage': ['user.manage', 'user'],
  'POST /api/user/2fa/enrol': ['2fa.enrol', 'user'],
  'POST /api/user/2fa/confirm': ['2fa.enable', 'user'],
  'POST /api/user/2fa/disable': ['2fa.disable', 'user'],
  'POST /api/user/:id/2fa/reset': ['2fa.reset', 'user'],
  'POST /api/user/topup': ['redemption.redeem', 'redemption'],
  'PUT /api/option/': ['option.update', 'option'],
  'POST /api/import/': ['import.start', 'import'],
  'GET /api/token/:id/key': ['token.key_reveal', 'token'],
  'GET /api/redemption/:id/key': ['redemption.key_reveal', 'redemption'],
  'POST /api/token/': ['token.create', 'token'],
  'PUT /api/token/': ['token.update', 'token'],
  'DELETE /api/token/:id': ['token.delete', 'token'],
  'POST /api/token/bulk': ['token.bulk', 'token'],
  'POST /api/channel/': ['channel.create', 'channel'],
  'PUT /api/channel/': ['channel.update', 'channel'],
  'DELETE /api/channel/:id': ['channel.delete', 'channel'],
  'POST /api/channel/bulk': ['channel.bulk', 'channel'],
  'POST /api/redemption/': ['redemption.create', 'redemption'],
  'PUT /api/redemption/': ['redemption.update', 'redemption'],
  'DELETE /api/redemption/:id': ['redemption.delete', 'redemption'],
  'POST /api/redemption/bulk': ['redemption.bulk', 'redemption'],
};

/**
 * Reads that are audited although they change nothing: they hand out a
 * secret. Every state-changing call is audited anyway (plugins/audit.ts).
 */
export const AUDITED_READS: ReadonlySet<string> = new Set(['/api/token/:id/key', '/api/redemption/:id/key']);

/** The action and target type of a call, by its method and route pattern. */
export function actionOf(method: string, route: string): { action: string; targetType: string } {
  const named = NAMED_ACTIONS[`${method} ${route}`];
  if (named) return { action: named[0], targetType: named[1] };
  return { action: `${method} ${route}`, targetType: /^\/api\/([a-z_]+)/.exec(route)?.[1] ?? '' };
}
