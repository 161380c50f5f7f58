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
    const rows = await db
      .selectFrom('abilities')
      .select('model')
      .distinct()
      .where('group', '=', caller.user.group)
      .where('enabled', '=', 1)
      .orderBy('model')
      .execute();
    const allowed = caller.token.models ? new Set(caller.token.models.split(',')) : undefined;
    const data = rows.filter((row) => !allowed || allowed.has(row.model)).map((row) => ({ id: row.model, object: 'model', created: 1677649963, owned_by: 'switchboard' }));
    return { object: 'list', data };
  });

  app.get('/v1/models/:model', async (request, reply) => {
    const caller = await authenticateRelay(db, request);
    if (isRelayError(caller)) return sendRelayError(reply, caller);
    const model = (request.params as { model: string }).model;
    const badName = modelNameProblem(model);
    if (badName) return sendRelayError(reply, badName);
    const allowedByToken = !caller.token.models || caller.token.models.split(',').includes(model);
    const row = await db.selectFrom('abilities').select('model').where('group', '=', caller.user.group).where('model', '=', model).where('enabled', '=', 1).executeTakeFirst();
    if (!row || !allowedByToken) return sendRelayError(reply, relayError(404, `The model '${model}' does not exist`, 'model_not_found'));
    return { id: model, object: 'model', created: 1677649963, owned_by: 'switchboard' };
  });

  await app.register(textRoutes(bookkeeping));
  await app.register(imageRoutes(bookkeeping));
  await app.register(audioRoutes(bookkeeping));
  await app.register(dashboardRoutes);
  await app.register(unimplementedRoutes);
}
