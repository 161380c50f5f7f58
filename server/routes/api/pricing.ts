// What a signed-in user pays: every model their group reaches (through an
// enabled channel) with its price in US$ per million tokens, the group's ratio
// applied, for the console's "Models and prices" page and for scripts. A model
// without a price is left out: the relay refuses it anyway. Admins also read
// the default price of every model (the catalog's, or the built-in table's),
// which the settings' price table shows beside the operator's overrides.
import type { FastifyInstance } from 'fastify';
import { ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import { DEFAULT_MODEL_RATIO, type OptionKey } from '../../../common/options';
import type { ModelPrice } from '../../../common/pricing';
import { catalogModelNames } from '../../billing/catalog';
import { defaultModelPrice, readablePrice } from '../../billing/prices';
import { requireRole, callerOf } from '../../plugins/auth';
import { groupModelChannels } from '../../repositories/channels';

const DEFAULT_QUOTA_PER_UNIT = 500_000;

export function pricingRoutes(app: FastifyInstance): Promise<void> {
  const signedIn = requireRole(Role.user);
  const admin = requireRole(Role.admin);

  app.get('/api/pricing', { preHandler: signedIn }, async (request) => {
    const { db, options } = app.ctx;
    const { group } = callerOf(request);
    const settings = {
      modelRatio: options.json('ModelRatio'),
      groupRatio: options.json('GroupRatio'),
      completionRatio: options.json('CompletionRatio'),
      cacheReadRatio: options.json('CacheReadRatio'),
      cacheWriteRatio: options.json('CacheWriteRatio'),
      quotaPerUnit: options.number('QuotaPerUnit') > 0 ? options.number('QuotaPerUnit') : DEFAULT_QUOTA_PER_UNIT,
    };
    const models = [...new Set((await groupModelChannels(db, group)).map((row) => row.model))];
    const prices = models.map((model) => readablePrice(model, group, settings)).filter((price): price is ModelPrice => price !== undefined);
    return ok(prices);
  });

  // every model the catalog prices, the built-in table lists or a ratio option names, sorted by name
  app.get('/api/pricing/defaults', { preHandler: admin }, () => {
    const { options } = app.ctx;
    const overridden = (['ModelRatio', 'CompletionRatio', 'CacheReadRatio', 'CacheWriteRatio'] as OptionKey[]).flatMap((key) =>
      Object.keys(options.json(key)),
    );
    const models = [...new Set([...catalogModelNames(), ...Object.keys(DEFAULT_MODEL_RATIO), ...overridden])].sort();
    return ok(models.map((model) => defaultModelPrice(model, DEFAULT_MODEL_RATIO)));
  });
  return Promise.resolve();
}
