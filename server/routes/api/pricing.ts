// What a signed-in user pays: every model their group reaches (through an
// enabled channel) with its price in US$ per million tokens, the group's ratio
// applied, for the console's "Models and prices" page and for scripts. A model
// without a price is left out: the relay refuses it anyway.
import type { FastifyInstance } from 'fastify';
import { ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import type { ModelPrice } from '../../../common/pricing';
import { readablePrice } from '../../billing/prices';
import { requireRole, callerOf } from '../../plugins/auth';
import { groupModelChannels } from '../../repositories/channels';

const DEFAULT_QUOTA_PER_UNIT = 500_000;

export function pricingRoutes(app: FastifyInstance): Promise<void> {
  const signedIn = requireRole(Role.user);

  app.get('/api/pricing', { preHandler: signedIn }, async (request) => {
    const { db, options } = app.ctx;
    const { group } = callerOf(request);
    const settings = {
      modelRatio: options.json('ModelRatio'),
      groupRatio: options.json('GroupRatio'),
      completionRatio: options.json('CompletionRatio'),
      quotaPerUnit: options.number('QuotaPerUnit') > 0 ? options.number('QuotaPerUnit') : DEFAULT_QUOTA_PER_UNIT,
    };
    const models = [...new Set((await groupModelChannels(db, group)).map((row) => row.model))];
    const prices = models.map((model) => readablePrice(model, group, settings)).filter((price): price is ModelPrice => price !== undefined);
    return ok(prices);
  });
  return Promise.resolve();
}
