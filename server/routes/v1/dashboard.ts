// OpenAI's old billing endpoints, which many chat clients call to show a
// balance: GET /dashboard/billing/subscription and /dashboard/billing/usage,
// also under /v1, authenticated by the relay key.
// Figures come from the calling token, or from its owner when the token is
// unlimited (its only real limit is the owner's quota) or when
// DisplayTokenStatEnabled is off; in dollars (quota / QuotaPerUnit) when
// DisplayInCurrencyEnabled is on. Usage is in cents, like OpenAI's; its
// start_date and end_date are ignored, as in v0.5.3.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isRelayError, sendRelayError } from '../../relay/errors';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';

export function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const { db, options } = app.ctx;

  const figures = (caller: RelayCaller) => {
    const fromToken = options.bool('DisplayTokenStatEnabled') && Number(caller.token.unlimited_quota) !== 1;
    const remain = Number(fromToken ? caller.token.remain_quota : caller.user.quota);
    const used = Number(fromToken ? caller.token.used_quota : caller.user.used_quota);
    const perUnit = options.number('QuotaPerUnit') || 500000;
    const inDollars = (quota: number) => (options.bool('DisplayInCurrencyEnabled') ? quota / perUnit : quota);
    const expiry = Number(caller.token.expired_time);
    return {
      limit: inDollars(remain + used),
      used: inDollars(used),
      accessUntil: options.bool('DisplayTokenStatEnabled') && expiry > 0 ? expiry : 0,
    };
  };

  const authenticated = async (request: FastifyRequest) => authenticateRelay(db, request);

  for (const prefix of ['', '/v1']) {
    app.get(`${prefix}/dashboard/billing/subscription`, async (request, reply) => {
      const caller = await authenticated(request);
      if (isRelayError(caller)) return sendRelayError(reply, caller);
      const { limit, accessUntil } = figures(caller);
      return {
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: limit,
        hard_limit_usd: limit,
        system_hard_limit_usd: limit,
        access_until: accessUntil,
      };
    });

    app.get(`${prefix}/dashboard/billing/usage`, async (request, reply) => {
      const caller = await authenticated(request);
      if (isRelayError(caller)) return sendRelayError(reply, caller);
      return { object: 'list', total_usage: figures(caller).used * 100 };
    });
  }
  return Promise.resolve();
}
