// One relayed call to the upstreams: pick a channel, send, and when the
// failure belongs to the channel rather than to the request, try another one,
// up to RetryTimes more, all inside the client's one request (no 307 like
// v0.5.3). The caller reserves and charges once, whatever the attempts.
//
// Retried: upstream 5xx, 429, network failures, and a dead key (401
// invalid_api_key / account_deactivated, insufficient_quota). A dead key is
// the channel's fault, not the request's, so the next channel may well
// succeed; the dead channel is never tried twice (tried channels are
// excluded) and is disabled when AutomaticDisableChannelEnabled is on. Other
// 4xx answers (a bad request, an unknown model) would fail anywhere and go
// straight back to the client.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { findChannelType } from '../../common/channelTypes';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/faults';
import { disableChannelAutomatically, parseUpstreamFailure, provesDeadKey, type UpstreamFailure } from './autoDisable';
import { selectChannel, type RoutedChannel } from './channelSelect';
import { relayError, unreachableRelayError, upstreamRelayError, type RelayError } from './errors';
import type { Operation } from '../protocols/types';
import { scrubSecrets } from './scrub';
import type { RelayCaller } from './tokenAuth';
import { AnswerBrokeOff, callUpstream, isUpstreamTimeout, joinChunks, poolFor, UpstreamBusy, type DisconnectSignal, type UpstreamResponse } from './upstream';

export interface UpstreamRequest {
  /** What is asked; a channel whose adaptor does not offer it is passed by. */
  operation?: Operation;
  /**
   * The client's parsed JSON body: what a channel that does not speak the
   * client's protocol gets, translated by its adaptor (absent for multipart).
   */
  json?: Record<string, unknown>;
  /** The client's query parameters that matter upstream (Azure and Spark read `api-version`). */
  query?: Readonly<Record<string, string>>;
  /** The model the client asked for: it routes, and channels may map it. */
  model: string;
  /** Upstream path, joined to the channel's base URL, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The body for one channel, given the model name that channel expects. */
  body: (upstreamModel: string) => string | Buffer;
  signal: DisconnectSignal;
  /**
   * Names this request in the log and in the error a token holder reads, so an
   * admin can find the upstream's full answer. Made (cheaply) when absent and
   * something failed.
   */
  requestId?: string;
}

export interface UpstreamAnswer {
  channel: RoutedChannel;
  upstreamModel: string;
  /**
   * The upstream's answer: status, content type, headers (parsed when first
   * read), and, for anything but JSON, its body still unread as `stream`.
   */
  response: UpstreamResponse;
  /** A JSON answer, read whole (it had to be, to see an error inside a 200); its value is parsed on first use. */
  json?: { bytes: Buffer; readonly value: unknown };
  /** The request's id, for the log line and the client's error when the answer breaks off. */
  requestId: string;
  log: FastifyBaseLogger;
}

export type Dispatched = { outcome: 'answered'; answer: UpstreamAnswer } | { outcome: 'failed'; error: RelayError } | { outcome: 'aborted' };

/** Parsed model mappings by their text, so a mapped channel costs one JSON.parse, not one per request. */
const parsedMappings = new Map<string, Readonly<Record<string, unknown>>>();
const MAX_CACHED_MAPPINGS = 1000;

function parseMapping(text: string): Readonly<Record<string, unknown>> {
  let mapping = parsedMappings.get(text);
  if (!mapping) {
    try {
      const parsed: unknown = JSON.parse(text);
      mapping = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      mapping = {};
    }
    // edited mappings leave old texts behind; start over rather than grow without bound
    if (parsedMappings.size >= MAX_CACHED_MAPPINGS) parsedMappings.clear();
    parsedMappings.set(text, mapping);
  }
  return mapping;
}

/** A whole body as one Buffer: the chunk itself when it came in one (no copy). */
function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    body.once('end', () => resolve(joinChunks(chunks, size)));
    body.once('error', reject);
  });
}

/** A JSON answer whose value is parsed on first use (undefined when it is not valid JSON). A class: an object literal with a getter costs far more to make. */
class LazyJson {
  private parsed: { value: unknown } | undefined;

  constructor(readonly bytes: Buffer) {}

  get value(): unknown {
    if (!this.parsed) {
      try {
        this.parsed = { value: JSON.parse(this.bytes.toString('utf8')) };
      } catch {
        this.parsed = { value: undefined };
      }
    }
    return this.parsed.value;
  }
}

/** The key an error object needs, as bytes (a string needle is converted on every search). */
const ERROR_KEY = Buffer.from('"error"');

/** The whole body of an answer (at once when it was read already); an upstream that breaks off mid-body is a 502, so the caller can release. */
export function answerBytes(answer: UpstreamAnswer): Buffer | Promise<Buffer | RelayError> {
  if (answer.json) return answer.json.bytes;
  return readAll(answer.response.stream!).catch((error: Error) => {
    const { requestId } = answer;
    answer.log.warn({ requestId, channelId: answer.channel.id, detail: scrubSecrets(error.message, answer.channel.key) }, 'upstream answer broke off');
    return isUpstreamTimeout(error)
      ? relayError(504, `the upstream answer stalled (request id ${requestId})`, 'upstream_timeout', 'server_error')
      : unreachableRelayError(true, requestId);
  });
}

/** The model a channel expects: its model_mapping entry, else the requested name. */
export function mappedModel(channel: RoutedChannel, model: string): string {
  if (!channel.model_mapping || channel.model_mapping === '{}') return model;
  const target = parseMapping(channel.model_mapping)[model];
  return typeof target === 'string' && target ? target : model;
}

interface UpstreamTarget {
  origin: string;
  /** The path and query to ask the origin for. */
  path: string;
}

/** Upstream targets by base URL and path: URL parsing once per channel and route, not per request. */
const upstreamTargets = new Map<string, UpstreamTarget>();
const MAX_CACHED_TARGETS = 1000;

function upstreamTarget(channel: RoutedChannel, path: string): UpstreamTarget {
  const base = channel.base_url || findChannelType(channel.type)?.defaultBaseUrl || '';
  const key = `${base}\0${path}`;
  let target = upstreamTargets.get(key);
  if (!target) {
    const url = new URL(path.replace(/^\/+/, ''), base.endsWith('/') ? base : `${base}/`);
    target = { origin: url.origin, path: url.pathname + url.search };
    // edited base URLs leave old entries behind; start over rather than grow without bound
    if (upstreamTargets.size >= MAX_CACHED_TARGETS) upstreamTargets.clear();
    upstreamTargets.set(key, target);
  }
  return target;
}

/**
 * A request's headers with the channel's key, made once per channel and headers
 * object (the routes pass shared constants; both keys are weak, so neither a
 * reloaded channel nor a one-off headers object is kept alive).
 */
const headersByChannel = new WeakMap<RoutedChannel, WeakMap<Record<string, string>, Record<string, string>>>();

function upstreamHeaders(channel: RoutedChannel, headers: Record<string, string>): Record<string, string> {
  let byHeaders = headersByChannel.get(channel);
  if (!byHeaders) {
    byHeaders = new WeakMap();
    headersByChannel.set(channel, byHeaders);
  }
  let merged = byHeaders.get(headers);
  if (!merged) {
    merged = { ...headers, authorization: `Bearer ${channel.key}` };
    byHeaders.set(headers, merged);
  }
  return merged;
}

/** A call the shutdown cut before its answer came: nothing is charged, and the client hears why. */
const SHUTTING_DOWN = relayError(503, 'the gateway is shutting down; please retry', 'shutting_down', 'server_error');

/** What the client hears when no upstream answered, by the last failure: no address or detail (those go to the log), the request id. */
function unansweredError(error: unknown, requestId: string): RelayError {
  if (error instanceof UpstreamBusy) return relayError(503, `the upstream is busy, please retry later (request id ${requestId})`, 'upstream_busy', 'server_error');
  const timedOut = error instanceof AnswerBrokeOff ? error.timedOut : isUpstreamTimeout(error);
  if (timedOut) return relayError(504, `the upstream timed out (request id ${requestId})`, 'upstream_timeout', 'server_error');
  return unreachableRelayError(error instanceof AnswerBrokeOff, requestId);
}

/** A 200 carrying an error object is a failure; give it the status OpenAI would have used. */
function statusOfErrorInOkBody(failure: UpstreamFailure): number {
  const code = String(failure.code ?? '');
  if (code === 'invalid_api_key' || code === 'account_deactivated') return 401;
  if (failure.type === 'insufficient_quota' || code === 'insufficient_quota' || code === 'rate_limit_exceeded') return 429;
  return 502;
}

export async function dispatch(app: FastifyInstance, caller: RelayCaller, request: UpstreamRequest): Promise<Dispatched> {
  const { db, options } = app.ctx;
  const attempts = 1 + Math.max(0, Math.floor(options.number('RetryTimes')));
  const tried: number[] = [];
  let lastError = relayError(503, `no channel available for model ${request.model}`, 'model_not_available', 'server_error');

  for (let attempt = 0; attempt < attempts; attempt += 1) {
    let channel: ReturnType<typeof selectChannel>;
    try {
      channel = selectChannel(db, caller.user.group, request.model, tried, caller.pinnedChannelId, Math.random, app.ctx.relayCache);
      if (channel instanceof Promise) channel = await channel;
    } catch (error) {
      // the caller holds a reservation: a failed outcome makes it release that before answering
      if (!isDatabaseUnavailable(error)) throw error;
      return { outcome: 'failed', error: relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error') };
    }
    if (!channel) break;
    tried.push(channel.id);
    if (findChannelType(channel.type)?.protocol !== 'openai') {
      lastError = relayError(501, `channel type ${channel.type} is not supported by this relay yet`, 'channel_type_unsupported', 'server_error');
      continue;
    }
    const upstreamModel = mappedModel(channel, request.model);
    const target = upstreamTarget(channel, request.path);
    let response: UpstreamResponse;
    try {
      response = await callUpstream(
        poolFor(target.origin),
        { path: target.path, headers: upstreamHeaders(channel, request.headers), body: request.body(upstreamModel) },
        request.signal,
      );
    } catch (error) {
      if (request.signal.aborted) return request.signal.byGateway ? { outcome: 'failed', error: SHUTTING_DOWN } : { outcome: 'aborted' };
      const requestId = (request.requestId ??= app.ctx.newRequestId());
      // the detail (an internal address, a TLS complaint) is for the admin, in the log; nothing reached the client yet,
      // so each of these is the channel's failure and the next channel may answer
      app.log.warn({ requestId, channelId: channel.id, attempt, detail: scrubSecrets((error as Error).message, channel.key) }, 'upstream call failed');
      lastError = unansweredError(error, requestId);
      continue;
    }

    const { bytes } = response;
    let failure: UpstreamFailure | undefined;
    let json: UpstreamAnswer['json'];
    if (response.status < 200 || response.status >= 300) {
      failure = parseUpstreamFailure(response.status, bytes!.toString('utf8'));
    } else if (bytes) {
      json = new LazyJson(bytes);
      // an error object needs the key "error": without those bytes the answer is not one, and
      // is parsed only when its value is asked for (once the client has it)
      const error = bytes.indexOf(ERROR_KEY) === -1 ? undefined : (json.value as { error?: unknown } | undefined)?.error;
      if (error && typeof error === 'object') {
        const parsed = parseUpstreamFailure(200, bytes.toString('utf8'));
        failure = { ...parsed, status: statusOfErrorInOkBody(parsed) };
        json = undefined;
      }
    }

    if (!failure) {
      return { outcome: 'answered', answer: { channel, upstreamModel, response, json, requestId: (request.requestId ??= app.ctx.newRequestId()), log: app.log } };
    }
    const status = failure.status ?? 502;
    const deadKey = provesDeadKey(failure);
    if (deadKey) {
      try {
        await disableChannelAutomatically(app, channel.id, scrubSecrets(failure.message, channel.key));
      } catch (error) {
        app.log.error({ err: error, channelId: channel.id }, 'could not disable a channel with a dead key');
      }
    }
    const requestId = (request.requestId ??= app.ctx.newRequestId());
    lastError = upstreamRelayError(status, failure, channel.key, requestId);
    app.log.warn(
      { requestId, channelId: channel.id, status, attempt, type: failure.type, code: failure.code, detail: scrubSecrets(failure.message, channel.key) },
      'upstream failed',
    );
    if (!(deadKey || status === 429 || status >= 500)) break;
  }
  return { outcome: 'failed', error: lastError };
}
