// What a caller pays: every model their group reaches (through an enabled
// channel) with its price in US$ per million tokens, the group's ratio
// applied, and the APIs it is reached through (chat, embeddings...), for the
// console's "Models and prices" page and for scripts. A model without a price
// is left out: the relay refuses it anyway. Signed-in users read their own
// group's list; when the operator publishes prices (PublicPricingEnabled), a
// visitor reads the default group's. Admins also read the default price of
// every model (the catalog's, or the built-in table's) and whether a channel
// serves it, which the settings' price table shows beside the overrides.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import { DEFAULT_MODEL_RATIO, type OptionKey } from '../../../common/options';
import type { ListedModelPrice } from '../../../common/pricing';
import { catalogModelNames } from '../../billing/catalog';
import { defaultModelPrice, readablePrice } from '../../billing/prices';
import { requireRole } from '../../plugins/auth';
import { modelEndpoints } from '../../protocols/modelEndpoints';
import { groupModelChannels, servedModelChannels } from '../../repositories/channels';
import { SESSION_COOKIE } from '../../services/session';

const DEFAULT_QUOTA_PER_UNIT = 500_000;
/** The group a visitor is priced as when prices are public. */
const VISITOR_GROUP = 'default';

/** The channel types serving each model, from (model, type) rows. */
function typesByModel(rows: ReadonlyArray<{ model: string; type: number | null }>): Map<string, number[]> {
  const byModel = new Map<string, number[]>();
  for (const { model, type } of rows) {
    const types = byModel.get(model) ?? [];
    if (type !== null) types.push(Number(type));
    byModel.set(model, types);
  }
  return byModel;
}

export function pricingRoutes(app: FastifyInstance): Promise<void> {
  const signedIn = requireRole(Role.user);
  const admin = requireRole(Role.admin);

  // a visitor (no session cookie, no access token) passes when prices are public; anyone else is checked as a user
  const signedInUnlessPublic = async (request: FastifyRequest, reply: FastifyReply) => {
    const visitor = !request.cookies[SESSION_COOKIE] && !request.headers.authorization;
    if (visitor && app.ctx.options.bool('PublicPricingEnabled')) return;
    await signedIn.call(app, request, reply);
  };

  app.get('/api/pricing', { preHandler: signedInUnlessPublic }, async (request) => {
    const { db, options } = app.ctx;
    const group = request.caller ? request.caller.group : VISITOR_GROUP;
    const settings = {
      modelRatio: options.json('ModelRatio'),
      groupRatio: options.json('GroupRatio'),
      completionRatio: options.json('CompletionRatio'),
      cacheReadRatio: options.json('CacheReadRatio'),
      cacheWriteRatio: options.json('CacheWriteRatio'),
      quotaPerUnit: options.number('QuotaPerUnit') > 0 ? options.number('QuotaPerUnit') : DEFAULT_QUOTA_PER_UNIT,
    };
    const channels = typesByModel(await groupModelChannels(db, group));
    const prices: ListedModelPrice[] = [];
    for (const [model, types] of channels) {
      const price = readablePrice(model, group, settings);
      if (price) prices.push({ ...price, endpoints: modelEndpoints(model, types) });
    }
    return ok(prices);
  });

  // every model the catalog prices, the built-in table lists, a ratio option names or a channel serves, sorted by name
  app.get('/api/pricing/defaults', { preHandler: admin }, async () => {
    const { db, options } = app.ctx;
    const overridden = (['ModelRatio', 'CompletionRatio', 'CacheReadRatio', 'CacheWriteRatio'] as OptionKey[]).flatMap((key) =>
      Object.keys(options.json(key)),
    );
    const served = new Set((await servedModelChannels(db)).map((row) => row.model));
    const models = [...new Set([...catalogModelNames(), ...Object.keys(DEFAULT_MODEL_RATIO), ...overridden, ...served])].sort();
    return ok(
      models.map((model) => ({ ...defaultModelPrice(model, DEFAULT_MODEL_RATIO), ...(served.has(model) ? { served: true } : {}) })),
    );
  });
  return Promise.resolve();
}
