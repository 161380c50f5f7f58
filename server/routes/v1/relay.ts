// The OpenAI-compatible relay (/v1/*) and OpenAI's billing endpoints. Every
// relayed call runs the one pipeline (server/relay/pipeline.ts):
// authenticate -> limits -> admit the model and price it -> reserve ->
// dispatch to a channel (retrying others on 5xx, 429, network failure or a
// dead key) -> answer -> settle the real charge and queue the log after the
// answer. Any failure releases the reservation. The route files only declare
// their steps (a RelayRoute each); this file registers every declaration.
//   text.ts           chat, completions, edits, embeddings, moderations (also before Fastify: textFastPath)
//   geminiNative.ts   Gemini's /v1beta/models/{model}:generateContent and :streamGenerateContent
//   images.ts         image generation
//   imageEdits.ts     image edits and variations (multipart)
//   audio.ts          transcriptions, translations, speech
//   rerank.ts         rerank (Cohere's and Jina's shape)
//   dashboard.ts      /dashboard/billing/* and /v1/dashboard/billing/*
//   files.ts          the Files API, served here (fileUpload.ts reads the upload)
//   videos.ts         the Videos API (Sora): asynchronous tasks, polled and settled by relay/tasks/
//   batches.ts        the Batch API, run by the gateway itself line by line (relay/batches/)
//   messageBatches.ts Anthropic's Message Batches, on the same machinery
//   unimplemented.ts  the 501 routes (fine-tunes, ...)
//   realtime.ts       GET /v1/realtime, a WebSocket (server/relay/realtime/ holds the session)
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { ownerOfChannelType } from '../../../common/channelTypes';
import type { Database } from '../../db/database';
import { bookkeepingFor } from '../../billing/bookkeeping';
import { groupModelChannels } from '../../repositories/channels';
import { relayContextOf } from '../../plugins/relayContext';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { anthropicMessages, countMessagesPromptTokens } from '../../protocols/inbound/anthropicMessages';
import { modelNameProblem } from '../../relay/requestFields';
import { authenticateRelay } from '../../relay/tokenAuth';
import { answerCrash, runRelay, type RelayDeclaration } from '../../relay/pipeline';
import { closePools } from '../../relay/upstream';
import { AUDIO_ROUTES } from './audio';
import { dashboardRoutes } from './dashboard';
import { fileRoutes } from './files';
import { geminiNativeRoutes } from './geminiNative';
import { proxyRoutes } from './proxy';
import { IMAGE_ROUTES } from './images';
import { IMAGE_FORM_ROUTES } from './imageEdits';
import { RERANK_ROUTES } from './rerank';
import { TEXT_ROUTES } from './text';
import { unimplementedRoutes } from './unimplemented';
import { videoRoutes } from './videos';
import { batchRoutes } from './batches';
import { messageBatchRoutes } from './messageBatches';
import { taskPollSettings } from '../../relay/tasks/poller';
import { realtimeRoutes } from './realtime';

/** Every relayed route, as its file declares it. */
const RELAY_ROUTES: readonly RelayDeclaration[] = [
  ...TEXT_ROUTES,
  ...IMAGE_ROUTES,
  ...IMAGE_FORM_ROUTES,
  ...AUDIO_ROUTES,
  ...RERANK_ROUTES,
];

/** The client's `api-version` query parameter, when it sent one (Azure and Spark read it upstream). */
function apiVersionOf(query: unknown): Readonly<Record<string, string>> | undefined {
  const version = (query as Record<string, unknown> | undefined)?.['api-version'];
  return typeof version === 'string' ? { 'api-version': version } : undefined;
}

/** The `created_at` Anthropic's model list carries (the gateway knows no release dates; the same fixed time as OpenAI's `created`). */
const ANTHROPIC_MODEL_CREATED_AT = new Date(1677649963 * 1000).toISOString();

const modelObject = (id: string, owner: string) => ({ id, object: 'model', created: 1677649963, owned_by: owner });

/**
 * The models a group reaches (its enabled abilities), sorted by name, each
 * with the `owned_by` of the channel that serves it first: the highest
 * priority, then the lowest channel id (common/channelTypes.ts `ownedBy`).
 */
async function modelOwners(db: Kysely<Database>, group: string, model?: string): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  for (const row of await groupModelChannels(db, group, model))
    if (!owners.has(row.model)) owners.set(row.model, ownerOfChannelType(Number(row.type)));
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
    // an Anthropic client (it sends anthropic-version) gets Anthropic's list, its errors in Anthropic's shape
    const anthropic = request.headers['anthropic-version'] !== undefined;
    const caller = await authenticateRelay(
      db,
      anthropic ? { ip: request.ip, headers: { authorization: anthropicMessages.authorization(request.headers) } } : request,
    );
    if (isRelayError(caller)) {
      if (!anthropic) return sendRelayError(reply, caller);
      return reply.code(caller.status).header('content-type', anthropicMessages.contentType).send(anthropicMessages.errorBody(caller));
    }
    const owners = await modelOwners(db, caller.user.group);
    const allowed = caller.token.models ? new Set(caller.token.models.split(',')) : undefined;
    const models = [...owners].filter(([model]) => !allowed || allowed.has(model));
    if (anthropic) {
      const data = models.map(([model]) => ({ type: 'model', id: model, display_name: model, created_at: ANTHROPIC_MODEL_CREATED_AT }));
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    }
    return { object: 'list', data: models.map(([model, owner]) => modelObject(model, owner)) };
  });

  app.get<{ Params: { model: string } }>('/v1/models/:model', async (request, reply) => {
    const caller = await authenticateRelay(db, request);
    if (isRelayError(caller)) return sendRelayError(reply, caller);
    const model = request.params.model;
    const badName = modelNameProblem(model);
    if (badName) return sendRelayError(reply, badName);
    const allowedByToken = !caller.token.models || caller.token.models.split(',').includes(model);
    const owner = (await modelOwners(db, caller.user.group, model)).get(model);
    if (owner === undefined || !allowedByToken)
      return sendRelayError(reply, relayError(404, `The model '${model}' does not exist`, 'model_not_found'));
    return modelObject(model, owner);
  });

  // Anthropic's token count: the prompt's local count (the tokenizer relay bills an unreported prompt by); authenticated, not billed
  app.post('/v1/messages/count_tokens', async (request, reply) => {
    const headers = { authorization: anthropicMessages.authorization(request.headers) };
    const fail = (error: RelayError) =>
      reply.code(error.status).header('content-type', anthropicMessages.contentType).send(anthropicMessages.errorBody(error));
    const caller = await authenticateRelay(db, { ip: request.ip, headers }, app.ctx.relayCache);
    if (isRelayError(caller)) return fail(caller);
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return fail(relayError(400, 'the request body must be a JSON object', 'invalid_json'));
    const fields = body as Record<string, unknown>;
    const model = anthropicMessages.model('chat', fields);
    if (!model) return fail(relayError(400, 'model: Field required', 'invalid_request_error'));
    if (!Array.isArray(fields.messages)) return fail(relayError(400, 'messages: Field required', 'invalid_request_error'));
    if (caller.token.models && !caller.token.models.split(',').includes(model))
      return fail(relayError(403, `this token may not use the model ${model}`, 'model_not_allowed'));
    return { input_tokens: countMessagesPromptTokens(fields, model, { approximate: app.ctx.options.bool('ApproximateTokenEnabled') }) };
  });

  const ctx = relayContextOf(app, bookkeeping);
  realtimeRoutes(app, ctx);
  for (const { path, route } of RELAY_ROUTES) {
    app.post<{ Params: { model?: string } }>(path, async (request, reply) => {
      // the pipeline writes to Node's response itself, as the fast path does
      reply.hijack();
      const input = {
        headers: request.headers,
        ip: request.ip,
        body: request.body,
        pathModel: request.params.model,
        query: apiVersionOf(request.query),
      };
      await runRelay(ctx, route, input, reply.raw).catch((error: unknown) => answerCrash(ctx, route.inbound, reply.raw, error));
    });
  }
  await app.register(geminiNativeRoutes, { ctx });
  await app.register(dashboardRoutes);
  await app.register(proxyRoutes, { bookkeeping });
  await app.register(fileRoutes);
  await app.register(videoRoutes, { ctx, polling: taskPollSettings(app.ctx.config.tasks) });
  await app.register(batchRoutes, { ctx });
  await app.register(messageBatchRoutes, { ctx });
  await app.register(unimplementedRoutes);
}
