// The OpenAI-compatible relay for the OpenAI-protocol channel types: chat,
// completions, embeddings and moderations, streamed or not; plus /v1/models.
// Order of work: authenticate -> route -> price -> reserve -> call upstream
// (retrying other channels on 5xx, 429 or network failure) -> answer ->
// settle the real charge -> log. Any failure releases the reservation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findChannelType } from '../../../common/channelTypes';
import { LogType } from '../../../common/roles';
import { completionRatioFor, computeQuota, lookupPrice, reservationQuota } from '../../relay/billing';
import { selectChannel, type RoutedChannel } from '../../relay/channelSelect';
import { relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { releaseQuota, reserveQuota, settleQuota, type Reservation } from '../../relay/quota';
import { SseUsageWatcher } from '../../relay/sseUsage';
import { countChatPromptTokens, countInputTokens, countTextTokens } from '../../relay/tokenCount';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';
import { closePools, poolFor } from '../../relay/upstream';
import { insertLog } from '../../repositories/logs';
import { remindIfLow } from '../../relay/quotaReminder';

type Mode = 'chat' | 'completions' | 'embeddings' | 'moderations';

const MODES: Record<string, Mode> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
  '/v1/moderations': 'moderations',
};

interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  estimated: boolean;
}

function upstreamUrl(channel: RoutedChannel, path: string): URL {
  const base = channel.base_url || findChannelType(channel.type)?.defaultBaseUrl || '';
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

function mappedModel(channel: RoutedChannel, model: string): string {
  try {
    const mapping = JSON.parse(channel.model_mapping || '{}') as Record<string, string>;
    return typeof mapping[model] === 'string' && mapping[model] ? mapping[model] : model;
  } catch {
    return model;
  }
}

const isRetryable = (status: number) => status === 429 || status >= 500;

export async function relayRoutes(app: FastifyInstance): Promise<void> {
  const { db, options } = app.ctx;
  app.addHook('onClose', closePools);

  app.get('/v1/models', async (request, reply) => {
    const caller = await authenticateRelay(db, request);
    if ('status' in caller) return sendRelayError(reply, caller);
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
    if ('status' in caller) return sendRelayError(reply, caller);
    const model = (request.params as { model: string }).model;
    const allowedByToken = !caller.token.models || caller.token.models.split(',').includes(model);
    const row = await db.selectFrom('abilities').select('model').where('group', '=', caller.user.group).where('model', '=', model).where('enabled', '=', 1).executeTakeFirst();
    if (!row || !allowedByToken) return sendRelayError(reply, relayError(404, `The model '${model}' does not exist`, 'model_not_found'));
    return { id: model, object: 'model', created: 1677649963, owned_by: 'switchboard' };
  });

  const relay = async (request: FastifyRequest, reply: FastifyReply) => {
    const started = Date.now();
    const path = request.url.split('?')[0].replace(/\/+$/, '');
    const mode = MODES[path];
    const caller = await authenticateRelay(db, request);
    if ('status' in caller) return sendRelayError(reply, caller);
    const body = request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return sendRelayError(reply, relayError(400, 'the request body must be a JSON object'));
    const model = typeof body.model === 'string' ? body.model.trim() : '';
    if (!model) return sendRelayError(reply, relayError(400, 'you must provide a model parameter', 'model_required'));
    if (caller.token.models && !caller.token.models.split(',').includes(model)) {
      return sendRelayError(reply, relayError(403, `this API key may not use the model ${model}`, 'model_not_allowed', 'permission_error'));
    }
    const price = lookupPrice(model, caller.user.group, options.json('ModelRatio'), options.json('GroupRatio'));
    if (!price.known) return sendRelayError(reply, relayError(403, price.reason, 'model_price_unset', 'permission_error'));

    const approximate = options.bool('ApproximateTokenEnabled');
    const promptTokens =
      mode === 'chat' ? countChatPromptTokens(body.messages, model, { approximate }) : countInputTokens(mode === 'completions' ? body.prompt : body.input, model, { approximate });
    const completionRatio = completionRatioFor(model);
    const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? 0) || 0;
    const reservation: Reservation = {
      userId: Number(caller.user.id),
      tokenId: Number(caller.token.id),
      limitedToken: Number(caller.token.unlimited_quota) !== 1,
      amount: reservationQuota({ promptTokens, maxTokens, preConsumedTokens: options.number('PreConsumedQuota'), ratio: price.ratio, completionRatio }),
    };
    const reserved = await reserveQuota(db, reservation);
    if (!reserved.ok) {
      return sendRelayError(
        reply,
        relayError(429, reserved.reason === 'user' ? 'your account quota is insufficient' : 'the quota of this API key is insufficient', 'insufficient_quota', 'insufficient_quota'),
      );
    }

    const streamed = body.stream === true;
    const clientAskedUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });

    const finish = async (channel: RoutedChannel, usage: Usage) => {
      const charge = computeQuota({ ...usage, ratio: price.ratio, completionRatio });
      await settleQuota(db, reservation, charge, channel.id, usage.promptTokens + usage.completionTokens > 0);
      if (charge > 0 && caller.user.email) void remindIfLow(app, Number(caller.user.id), charge);
      if (options.bool('LogConsumeEnabled')) {
        await insertLog(db, {
          userId: Number(caller.user.id),
          username: caller.user.username,
          type: LogType.consume,
          content: `model ratio ${(price.ratio / (options.json('GroupRatio')[caller.user.group] ?? 1)).toFixed(2)}, group ratio ${(options.json('GroupRatio')[caller.user.group] ?? 1).toFixed(2)}`,
          quota: charge,
          tokenName: caller.token.name,
          tokenId: Number(caller.token.id),
          modelName: model,
          channelId: channel.id,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          elapsedMs: Date.now() - started,
          isStream: streamed,
          estimated: usage.estimated,
        });
      }
    };

    const tried: number[] = [];
    const attempts = 1 + Math.max(0, Math.floor(options.number('RetryTimes')));
    let lastError: RelayError = relayError(503, `no channel available for model ${model}`, 'model_not_available', 'server_error');
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const channel = await selectChannel(db, caller.user.group, model, tried, caller.pinnedChannelId);
      if (!channel) break;
      tried.push(channel.id);
      if (findChannelType(channel.type)?.protocol !== 'openai') {
        lastError = relayError(501, `channel type ${channel.type} is not supported by this relay yet`, 'channel_type_unsupported', 'server_error');
        continue;
      }
      const upstreamBody: Record<string, unknown> = { ...body, model: mappedModel(channel, model) };
      if (streamed && mode === 'chat') upstreamBody.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
      const url = upstreamUrl(channel, path.slice(1));
      let response;
      try {
        response = await poolFor(url.origin).request({
          method: 'POST',
          path: url.pathname + url.search,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${channel.key}`,
            accept: streamed ? 'text/event-stream' : 'application/json',
          },
          body: JSON.stringify(upstreamBody),
          signal: abort.signal,
        });
      } catch (error) {
        if (abort.signal.aborted) {
          await releaseQuota(db, reservation);
          return reply;
        }
        lastError = relayError(502, `the upstream could not be reached: ${(error as Error).message}`, 'upstream_unreachable', 'server_error');
        continue;
      }

      if (response.statusCode < 200 || response.statusCode >= 300) {
        const text = await response.body.text();
        if (isRetryable(response.statusCode) && attempt + 1 < attempts) {
          lastError = relayError(response.statusCode, text, 'upstream_error', 'server_error');
          continue;
        }
        await releaseQuota(db, reservation);
        let upstreamError: unknown;
        try {
          upstreamError = JSON.parse(text);
        } catch {
          upstreamError = undefined;
        }
        if (upstreamError && typeof upstreamError === 'object' && 'error' in upstreamError) return reply.code(response.statusCode).send(upstreamError);
        return sendRelayError(reply, relayError(response.statusCode, `upstream answered HTTP ${response.statusCode}`, 'upstream_error', 'server_error'));
      }

      const contentType = String(response.headers['content-type'] ?? 'application/json');
      if (!streamed || !contentType.includes('text/event-stream')) {
        const bytes = Buffer.from(await response.body.arrayBuffer());
        let usage: Usage = { promptTokens, completionTokens: 0, cachedPromptTokens: 0, estimated: true };
        try {
          const parsed = JSON.parse(bytes.toString('utf8')) as {
            usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
            choices?: Array<{ message?: { content?: unknown }; text?: unknown }>;
          };
          if (parsed.usage && Number(parsed.usage.prompt_tokens ?? 0) + Number(parsed.usage.completion_tokens ?? 0) > 0) {
            usage = {
              promptTokens: Number(parsed.usage.prompt_tokens) || 0,
              completionTokens: Number(parsed.usage.completion_tokens) || 0,
              cachedPromptTokens: Number(parsed.usage.prompt_tokens_details?.cached_tokens) || 0,
              estimated: false,
            };
          } else {
            const text = (parsed.choices ?? []).map((choice) => (typeof choice.message?.content === 'string' ? choice.message.content : typeof choice.text === 'string' ? choice.text : '')).join('');
            usage.completionTokens = countTextTokens(text, model, { approximate });
          }
        } catch {
          // not JSON: nothing billable beyond the prompt
        }
        reply.code(response.statusCode).header('content-type', contentType).send(bytes);
        await finish(channel, usage);
        return reply;
      }

      // Streaming: hand each complete event on as it arrives.
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      const watcher = new SseUsageWatcher(!clientAskedUsage);
      let clientGone = false;
      try {
        for await (const chunk of response.body) {
          const out = watcher.push((chunk as Buffer).toString('utf8'));
          if (out) reply.raw.write(out);
        }
        const rest = watcher.flush();
        if (rest) reply.raw.write(rest);
      } catch {
        clientGone = abort.signal.aborted;
      }
      if (!reply.raw.writableEnded) reply.raw.end();
      const reported = watcher.reportedUsage();
      const usage: Usage =
        reported && !clientGone && reported.promptTokens + reported.completionTokens > 0
          ? { ...reported, estimated: false }
          : { promptTokens, completionTokens: countTextTokens(watcher.streamedText(), model, { approximate }), cachedPromptTokens: 0, estimated: true };
      await finish(channel, usage);
      return reply;
    }
    await releaseQuota(db, reservation);
    return sendRelayError(reply, lastError);
  };

  for (const path of Object.keys(MODES)) app.post(path, relay);
}
