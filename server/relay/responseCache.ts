// The exact response cache (docs/cache.md): an identical request answered
// again from what the upstream said the first time, without calling it.
// The pipeline looks a request up once the caller is known and the model
// admitted, before the hold, which for a hit is only the operator's share of
// the price (ResponseCacheHitRatio, by default nothing); it then calls the
// cache in place of dispatch. A hit is an answer like any other, so the
// route writes it and bills its usage the same way (at that share); a miss is
// dispatched, and its answer stored as it passes when it comes whole with a
// 200. Only answers of channels that speak the client's protocol are stored
// (their bytes replay through the same route); a translated answer is not.
//
// The key is a SHA-256 of a canonical JSON (sorted keys) of what is sent
// upstream (the body as encoded for the model, the path, the client's
// protocol, whether it streams) and of the scope: the key's owner by
// default, its group or everyone when the operator widens it.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable, Transform, pipeline } from 'node:stream';
import type { Bill } from '../billing/accounting';
import type { Operation } from '../protocols/types';
import type { OptionStore } from '../services/optionStore';
import { LazyJson, type UpstreamAnswer, type UpstreamRequest } from './attempt';
import type { RoutedChannel } from './channelSelect';
import type { Dispatched } from './dispatch';
import type { RelayCall } from './pipeline';
import type { CachedAnswer, ResponseCacheStore, StoredAnswer } from './responseCacheStore';
import { UpstreamResponse } from './upstream';

/** The request header that asks (`on`) or refuses (`off`) the cache, and the answer's header saying `hit` or `miss`. */
export const CACHE_HEADER = 'x-switchboard-cache';
/** The request header by which a client marks its tools as having side effects: such a request is not cached unless asked. */
export const SIDE_EFFECTS_HEADER = 'x-switchboard-side-effects';

/** The operations whose answers may be stored: the token-metered text routes that are not moderation or edits. */
const CACHEABLE = new Set<Operation>(['chat', 'completions', 'embeddings']);

/** What the cache does for one request: the key, and whether it may read and store. */
interface CachePlan {
  key: string;
  read: boolean;
  store: boolean;
}

/** What the cache made of a request before its hold: how it takes it (none: it stays out) and, on a hit, the answer. */
export interface CacheLookup {
  plan: CachePlan | undefined;
  cached: StoredAnswer | undefined;
  /** The request as it goes upstream, built for the key: dispatch sends this one rather than build it again. */
  request: UpstreamRequest;
}

/**
 * Looks the request up before its hold is made (pipeline.ts), so that a hit
 * holds only the operator's share of the price: by default nothing, and the
 * ledger is not written for it. Undefined with the cache off (the default).
 */
export function lookUpBeforeHold(call: RelayCall): Promise<CacheLookup> | undefined {
  const { ctx } = call;
  if (!ctx.responseCache || !ctx.options.bool('ResponseCacheEnabled')) return undefined;
  return lookUp(call, ctx.responseCache);
}

async function lookUp(call: RelayCall, store: ResponseCacheStore): Promise<CacheLookup> {
  const { ctx } = call;
  const request = call.route.upstream(call);
  const plan = planOf(call, request);
  if (!plan?.read) return { plan, cached: undefined, request };
  const cached = await store.get(plan.key).catch((error: unknown) => {
    ctx.log.warn({ err: error }, 'response cache unreadable: the request goes upstream');
    return undefined;
  });
  return { plan, cached, request };
}

/** The share of a hit's full price that it is billed (ResponseCacheHitRatio, 0 to 1). */
export const hitShare = (options: OptionStore) => Math.min(1, Math.max(0, options.number('ResponseCacheHitRatio') || 0));

/**
 * Dispatches the request, or answers it from what lookUpBeforeHold found.
 * Without a plan (the cache off, or not for this request) this is dispatch
 * itself, and the answer carries no cache header.
 */
export function cachedDispatch(call: RelayCall, request: UpstreamRequest, lookup: CacheLookup | undefined): Promise<Dispatched> {
  const plan = lookup?.plan;
  if (!plan) return call.ctx.dispatch(call.caller, request);
  return throughCache(call, request, plan, lookup.cached);
}

async function throughCache(
  call: RelayCall,
  request: UpstreamRequest,
  plan: CachePlan,
  cached: StoredAnswer | undefined,
): Promise<Dispatched> {
  const { ctx } = call;
  if (cached) {
    call.response.setHeader(CACHE_HEADER, 'hit');
    call.billOfHit = (bill) => hitBill(ctx.options, bill);
    return { outcome: 'answered', answer: replayed(call, request, cached) };
  }
  call.response.setHeader(CACHE_HEADER, 'miss');
  const dispatched = await ctx.dispatch(call.caller, request);
  if (plan.store && dispatched.outcome === 'answered') storeAsItPasses(call, plan.key, dispatched.answer);
  return dispatched;
}

/** Whether and how the cache takes this request; undefined when it stays out of it (and the answer says nothing). */
function planOf(call: RelayCall, request: UpstreamRequest): CachePlan | undefined {
  const { options } = call.ctx;
  const { headers } = call.input;
  if (call.route.body !== 'json' || !CACHEABLE.has(call.route.operation)) return undefined;
  const asked = headerOf(headers, CACHE_HEADER);
  if (asked === 'off') return undefined;
  if (asked !== 'on' && !optedIn(options, call)) return undefined;
  const control = headerOf(headers, 'cache-control');
  const noStore = control.includes('no-store');
  // a request the operator would not cache is relayed as it is, unless the client asked for the cache
  if (noStore || (asked !== 'on' && !deterministic(options, call))) return { key: '', read: false, store: false };
  return { key: cacheKey(call, request), read: !control.includes('no-cache'), store: true };
}

const headerOf = (headers: IncomingHttpHeaders, name: string) => String(headers[name] ?? '').toLowerCase();

const listed = (list: string, value: string) =>
  list !== '' &&
  list
    .split(',')
    .map((item) => item.trim())
    .includes(value);

/** The operator opted the caller's group, its key or the model in. */
function optedIn(options: OptionStore, call: RelayCall): boolean {
  return (
    listed(options.get('ResponseCacheGroups'), call.caller.user.group) ||
    listed(options.get('ResponseCacheModels'), call.model) ||
    listed(options.get('ResponseCacheTokens'), String(call.caller.token.id))
  );
}

/**
 * Whether the request asks for one answer that may be given again: a
 * temperature at most the operator's threshold (absent, the vendors' default
 * of 1), one choice, no tools the client marked as having side effects.
 */
function deterministic(options: OptionStore, call: RelayCall): boolean {
  const { body } = call;
  if (['true', '1', 'yes'].includes(headerOf(call.input.headers, SIDE_EFFECTS_HEADER))) return false;
  if (call.route.operation === 'embeddings') return true;
  const generation = body.generationConfig as Record<string, unknown> | undefined;
  const temperature = body.temperature ?? generation?.temperature;
  const choices = body.n ?? generation?.candidateCount;
  if (typeof choices === 'number' && choices > 1) return false;
  return (typeof temperature === 'number' ? temperature : 1) <= options.number('ResponseCacheMaxTemperature');
}

/**
 * The canonical keys of requests by a digest of the bytes that go upstream and of what else the key holds: a
 * request repeated byte for byte is not parsed into canonical JSON again. Bounded (cleared when full).
 */
const keysByBytes = new Map<string, string>();
const MAX_REMEMBERED_KEYS = 4096;

/** The scope and the request as it goes upstream, hashed. */
function cacheKey(call: RelayCall, request: UpstreamRequest): string {
  const scope = scopeOf(call.ctx.options, call);
  const protocol = request.inbound ?? 'openai';
  const stream = request.stream === true;
  const sent = request.body(request.model);
  const bytes = createHash('sha256')
    .update(`${scope}\n${protocol}\n${request.path}\n${String(stream)}\n`)
    .update(sent)
    .digest('hex');
  const known = keysByBytes.get(bytes);
  if (known !== undefined) return known;
  let body: unknown = call.body;
  if (sent !== call.input.raw) {
    try {
      body = JSON.parse(typeof sent === 'string' ? sent : sent.toString('utf8'));
    } catch {
      body = typeof sent === 'string' ? sent : sent.toString('base64');
    }
  }
  const key = createHash('sha256')
    .update(canonicalJson({ scope, protocol, path: request.path, stream, body }))
    .digest('hex');
  if (keysByBytes.size >= MAX_REMEMBERED_KEYS) keysByBytes.clear();
  keysByBytes.set(bytes, key);
  return key;
}

function scopeOf(options: OptionStore, call: RelayCall): string {
  const scope = options.get('ResponseCacheScope').trim().toLowerCase();
  if (scope === 'global') return 'global';
  if (scope === 'group') return `group:${call.caller.user.group}`;
  return `user:${call.caller.user.id}`;
}

/** JSON with every object's keys in order, so two spellings of one request hash alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Where a hit's answer comes from: no channel (its charge is no channel's use). */
const CACHE_CHANNEL: RoutedChannel = {
  id: 0,
  name: 'response cache',
  type: 0,
  key: '',
  base_url: '',
  other: '',
  model_mapping: '',
  priority: 0,
  weight: 0,
  multi_key: 0,
  key_strategy: '',
};

/** A stored answer as an upstream's: a stream's chunks replayed in order, or the whole body. */
function replayed(call: RelayCall, request: UpstreamRequest, cached: StoredAnswer): UpstreamAnswer {
  const response = new UpstreamResponse(cached.status, [], cached.contentType);
  let json: LazyJson | undefined;
  if (cached.chunks) response.stream = Readable.from(cached.chunks);
  else json = new LazyJson(cached.body ?? Buffer.alloc(0));
  const requestId = (request.requestId ??= call.ctx.newRequestId());
  return { channel: CACHE_CHANNEL, upstreamModel: request.model, response, json, requestId, log: call.ctx.log };
}

/** A hit's bill: the operator's share of the full charge, noting what it saved. */
function hitBill(options: OptionStore, bill: Bill): Bill {
  const charge = Math.round(bill.charge * hitShare(options));
  return {
    ...bill,
    charge,
    detail: bill.detail ? `${bill.detail}; response cache hit` : 'response cache hit',
    cacheHit: { saved: bill.charge - charge },
  };
}

/** Stores a 200 answer of a channel that speaks the client's protocol: at once when whole, at its end when streamed. */
function storeAsItPasses(call: RelayCall, key: string, answer: UpstreamAnswer): void {
  const { response } = answer;
  if (answer.translated || response.status !== 200) return;
  const maxEntryBytes = call.ctx.options.number('ResponseCacheMaxEntryKB') * 1024;
  const base = { status: response.status, contentType: response.contentType, channelId: answer.channel.id };
  if (answer.json) {
    if (answer.json.bytes.length <= maxEntryBytes) store(call, key, { ...base, body: answer.json.bytes.toString('base64') });
    return;
  }
  const source = response.stream;
  if (!source) return;
  const chunks: Buffer[] = [];
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size <= maxEntryBytes) chunks.push(chunk);
      done(null, chunk);
    },
  });
  // the route reads the tap; an upstream that breaks off (or a client that leaves) fails it, and nothing is stored
  response.stream = pipeline(source, tap, (error) => {
    if (!error && size <= maxEntryBytes) store(call, key, { ...base, chunks: chunks.map((chunk) => chunk.toString('base64')) });
  });
}

function store(call: RelayCall, key: string, cached: CachedAnswer): void {
  const { ctx } = call;
  const { options } = ctx;
  const limits = {
    ttlMs: Math.max(1, options.number('ResponseCacheTtlSeconds') * 1000),
    maxTotalBytes: options.number('ResponseCacheMaxTotalMB') * 1024 * 1024,
  };
  void ctx.bookkeeping.track(
    ctx.responseCache!.put(key, cached, limits).catch((error: unknown) => {
      ctx.log.warn({ err: error }, 'could not store an answer in the response cache');
    }),
  );
}
