// The OpenAI-compatible relay (/v1/*) and OpenAI's billing endpoints. Every
// relayed call runs: authenticate -> admit the model and price it -> reserve
// -> dispatch to a channel (retrying others on 5xx, 429, network failure or a
// dead key) -> answer -> settle the real charge and queue the log after the
// answer. Any failure releases the reservation.
//   text.ts           chat, completions, edits, embeddings, moderations
//   images.ts         image generation
//   audio.ts          transcriptions, translations, speech
//   dashboard.ts      /dashboard/billing/* and /v1/dashboard/billing/*
//   unimplemented.ts  the 501 routes (files, fine-tunes, ...)
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { ownerOfChannelType } from '../../../common/channelTypes';
import type { Database } from '../../db/database';
import { bookkeepingFor } from '../../relay/bookkeeping';
import { isRelayError, relayError, sendRelayError } from '../../relay/errors';
import { modelNameProblem } from '../../relay/requestFields';
import { authenticateRelay } from '../../relay/tokenAuth';
import { closePools } from '../../relay/upstream';
import { audioRoutes } from './audio';
import { dashboardRoutes } from './dashboard';
import { imageRoutes } from './images';
import { textRoutes } from './text';
import { unimplementedRoutes } from './unimplemented';

const modelObject = (id: string, owner: string) => ({ id, object: 'model', created: 1677649963, owned_by: owner });

/**
 * The models a group reaches (its enabled abilities), sorted by name, each
 * with the `owned_by` of the channel that serves it first: the highest
 * priority, then the lowest channel id (common/channelTypes.ts `ownedBy`).
 */
async function modelOwners(db: Kysely<Database>, group: string, model?: string): Promise<Map<string, string>> {
  let query = db
    .selectFrom('abilities')
    .leftJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['abilities.model', 'channels.type'])
    .where('abilities.group', '=', group)
    .where('abilities.enabled', '=', 1);
  if (model !== undefined) query = query.where('abilities.model', '=', model);
  const rows = await query.orderBy('abilities.model').orderBy('abilities.priority', 'desc').orderBy('abilities.channel_id').execute();
  const owners = new Map<string, string>();
  for (const row of rows) if (!owners.has(row.model)) owners.set(row.model, ownerOfChannelType(Number(row.type)));
  return owners;
}

export async function relayRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  const bookkeeping = bookkeepingFor(app.ctx, app.log);
  // Child hooks run before the root's, so this settles and writes every log
  // before app.ts closes the database.
  app.addHook('onClose', async () => {
    await bookkeeping.close();
    await closePools();
  });
  // Uploads are forwarded as they came (boundary and all), so they stay raw bytes; only this plugin sees the parser.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.get('/v1/models', async (request, reply) => {
    const caller = await authenticateRelay(db, request);
    if (isRelayError(caller)) return sendRelayError(reply, caller);
    const owners = await modelOwners(db, caller.user.group);
    const allowed = caller.token.models ? new Set(caller.token.models.split(',')) : undefined;
    const data = [...owners].filter(([model]) => !allowed || allowed.has(model)).map(([model, owner]) => modelObject(model, owner));
    return { object: 'list', data };
  });

  app.get('/v1/models/:model', async (request, reply) => {
    const caller = await authenticateRelay(db, request);
    if (isRelayError(caller)) return sendRelayError(reply, caller);
    const model = (request.params as { model: string }).model;
    const badName = modelNameProblem(model);
    if (badName) return sendRelayError(reply, badName);
    const allowedByToken = !caller.token.models || caller.token.models.split(',').includes(model);
    const owner = (await modelOwners(db, caller.user.group, model)).get(model);
    if (owner === undefined || !allowedByToken) return sendRelayError(reply, relayError(404, `The model '${model}' does not exist`, 'model_not_found'));
    return modelObject(model, owner);
  });

  await app.register(textRoutes(bookkeeping));
  await app.register(imageRoutes(bookkeeping));
  await app.register(audioRoutes(bookkeeping));
  await app.register(dashboardRoutes);
  await app.register(unimplementedRoutes);
}
