// Where a relayed request comes in: the key and the JSON body every JSON route
// opens with, the model it names, and the body reader of the fast path
// (fastPath.ts), which reads the bytes itself where Fastify is bypassed.
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { RelayContext } from './context';
import { isRelayError, relayError, type RelayError } from './errors';
import { relayFieldProblem } from './requestFields';
import { authenticateRelay, type RelayCaller } from './tokenAuth';
import { joinChunks } from './upstream';

export interface OpenedRequest {
  caller: RelayCaller;
  body: Record<string, unknown>;
  /** Set when the key is valid but the body is refused: the refusal is the caller's, and logged as such. */
  refused?: RelayError;
}

/** The start of every JSON relay route: a valid key and a JSON object body (synchronous when the key was cached). */
export function openJsonRequest(
  ctx: RelayContext,
  request: Pick<FastifyRequest, 'ip' | 'body'> & { headers: { authorization?: string } },
): OpenedRequest | RelayError | Promise<OpenedRequest | RelayError> {
  const caller = authenticateRelay(ctx.db, request, ctx.cache, ctx.ledger);
  return caller instanceof Promise ? caller.then((checked) => withBody(checked, request.body)) : withBody(caller, request.body);
}

function withBody(caller: RelayCaller | RelayError, body: unknown): OpenedRequest | RelayError {
  if (isRelayError(caller)) return caller;
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body))
    return { caller, body: {}, refused: relayError(400, 'the request body must be a JSON object') };
  const refused = relayFieldProblem(body as Record<string, unknown>);
  return refused ? { caller, body: {}, refused } : { caller, body: body as Record<string, unknown> };
}

/** The trimmed `model` of a body, or ''. */
export const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

/** The client's `api-version` from a request URL's query, when it sent one (Azure and Spark read it upstream). */
export function queryOf(url: string, queryStart: number): Readonly<Record<string, string>> | undefined {
  if (queryStart === -1 || !url.includes('api-version', queryStart)) return undefined;
  const version = new URLSearchParams(url.slice(queryStart + 1)).get('api-version');
  return version === null ? undefined : { 'api-version': version };
}

const ignoreError = () => undefined;

/** The JSON body, parsed and as bytes (unless they may not go upstream as they are: forwardableBytes), or the 400/413 a client gets for a bad one (the same as Fastify's parser gives). */
export type JsonBodyRead = { body: unknown; raw: Buffer | undefined } | RelayError;

/**
 * The client's bytes when they may be forwarded as they are, else undefined
 * (the relay then sends the body as JSON prints it). The prompt's bound counts
 * a number by the characters JSON prints it with (promptBound.ts), so bytes
 * holding a number written longer (a 100,000-digit literal, `1.000`, `1E2`)
 * are not forwarded: what goes upstream is then what was counted.
 */
export function forwardableBytes(text: string, raw: Buffer): Buffer | undefined {
  return hasRewrittenNumber(text) ? undefined : raw;
}

/** Whether valid JSON `text` holds a number literal longer than the form JSON.stringify gives it. Linear: strings are skipped with indexOf. */
export function hasRewrittenNumber(text: string): boolean {
  const end = text.length;
  let at = 0;
  while (at < end) {
    const quote = text.indexOf('"', at);
    if (numberRewrittenIn(text, at, quote === -1 ? end : quote)) return true;
    if (quote === -1) return false;
    // the string's closing quote: the first one after an even run of backslashes
    let close = quote;
    for (;;) {
      close = text.indexOf('"', close + 1);
      if (close === -1) return false;
      let slashes = 0;
      while (text.charCodeAt(close - 1 - slashes) === 92) slashes += 1;
      if (slashes % 2 === 0) break;
    }
    at = close + 1;
  }
  return false;
}

/** Whether a stretch of JSON outside strings holds a number JSON would print shorter. */
function numberRewrittenIn(text: string, from: number, to: number): boolean {
  let at = from;
  while (at < to) {
    const code = text.charCodeAt(at);
    // a number starts with '-' or a digit; nothing else outside strings can
    if (code !== 45 && (code < 48 || code > 57)) {
      at += 1;
      continue;
    }
    const start = at;
    let plainInteger = true;
    while (at < to) {
      const next = text.charCodeAt(at);
      if (next >= 48 && next <= 57) at += 1;
      else if (next === 45 || next === 43 || next === 46 || next === 101 || next === 69) {
        if (!(next === 45 && at === start)) plainInteger = false;
        at += 1;
      } else break;
    }
    const length = at - start;
    // an integer of up to 15 digits prints as it is written (JSON allows no leading zeros; "-0" prints as "0")
    if (plainInteger && length <= 16 && text.slice(start, at) !== '-0') continue;
    if (length > JSON.stringify(Number(text.slice(start, at))).length) return true;
  }
  return false;
}

/**
 * Reads the JSON body and hands it to `done` (or the request's stream error to
 * `failed`), once. Callbacks rather than a promise: the fast path starts the
 * relay from the body's end, with no promise and no turn of the microtask
 * queue in between.
 */
export function readJsonBody(
  request: IncomingMessage,
  limit: number,
  done: (read: JsonBodyRead) => void,
  failed: (error: unknown) => void,
): void {
  // 'data' and 'end' listeners: cheaper per request than an async iterator
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) return void chunks.push(chunk);
    // the rest is drained unread: a stream error then has nobody left to tell
    request.off('data', onData).off('end', onEnd).off('error', failed).on('error', ignoreError).resume();
    done(relayError(413, `the request body is larger than ${limit} bytes`, 'request_too_large'));
  };
  const onEnd = () => {
    request.off('error', failed);
    if (size === 0) return done(relayError(400, 'the request body must be a JSON object', 'invalid_json'));
    const raw = joinChunks(chunks, size);
    const text = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return done(relayError(400, `the request body is not valid JSON: ${(error as Error).message}`, 'invalid_json'));
    }
    done({ body, raw: forwardableBytes(text, raw) });
  };
  request.on('data', onData).on('end', onEnd).once('error', failed);
}
