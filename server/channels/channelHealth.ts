// Channel checks: the one-request test, the balance queries, the test-all and
// balance-all jobs, and the health pass that brings back channels the system
// disabled. Every upstream call has a deadline. Nothing here disables or
// re-enables a channel except through autoDisable.ts, so the
// AutomaticDisableChannelEnabled toggle and the auto_disabled flag are
// honoured everywhere, and a channel an admin disabled is never re-enabled.
//
// Each job runs on one worker of one node at a time: the "already running"
// guard of this process first, then the job's lease (services/jobRunner.ts).
// A test-all or balance-all run shares its progress through its lease, so the
// console's poll is answered by whichever worker it lands on.
//
// Balance endpoints: each type's row in common/channelTypes.ts names the kind
// of endpoint and its unit; this file holds one fetcher per kind (OpenAI's
// billing dashboard and the resellers' variants of it, and
// today's vendors' own). The channel's base URL wins over the documented
// host, so a self-hosted mirror (or a test emulator) is queried where it lives.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { request as undiciRequest } from 'undici';
import type { ChannelJob } from '../../common/listQuery';
import {
  BALANCE_CHANNEL_TYPES,
  findChannelType,
  type BalanceSourceKind,
  type BalanceUnit,
  type ChannelBalance,
} from '../../common/channelTypes';
import { assembleChatResponse } from '../protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatResponse,
  type UpstreamAdaptor,
} from '../protocols/types';
import { adaptorForChannelType } from '../protocols/upstream';
import { openAiFailure } from '../protocols/upstream/openai';
import { ChannelStatus } from '../../common/roles';
import { channelTestThresholdSeconds } from '../../common/options';
import type { AppContext } from '../services/context';
import {
  findChannel,
  listChannelsToCheck,
  recordChannelBalance,
  recordChannelTest,
  splitList,
  type ChannelRow,
} from '../repositories/channels';
import { listAutoDisabledKeys, liveChannelKeys, recordChannelKeyError, type ChannelKeyRow } from '../repositories/channelKeys';
import { scrubSecrets } from '../relay/scrub';
import { secretsOf } from '../relay/attempt';
import {
  disableChannelAutomatically,
  disableChannelKeyAutomatically,
  notifyRoot,
  reenableChannelAutomatically,
  reenableChannelKeyAutomatically,
  type UpstreamFailure,
} from './autoDisable';
import { channelKeyUsageOf } from './keyUsage';
import { credentialFor } from '../relay/credentials';
import { DisconnectSignal } from '../relay/upstream';
import { openWebSocketCall, WebSocketRefused } from '../relay/websocketUpstream';
import { nextTickDue, type HeldJob } from '../services/jobRunner';

/** Deadline for any one upstream call made by a check (test or balance). */
export const CHECK_TIMEOUT_MS = 30_000;

/** The model a test asks for when a channel lists none. */
const FALLBACK_TEST_MODEL = 'gpt-3.5-turbo';

export interface ChannelTestResult {
  success: boolean;
  message: string;
  /** Wall-clock seconds of the upstream call; 0 when nothing was sent. */
  seconds: number;
  /** False when no request went out (type not supported, no base URL, a key the adaptor cannot read). */
  sent: boolean;
  /** What the upstream said when it refused, for the dead-key decision. */
  failure?: UpstreamFailure;
  /** The model asked for, as the channel's models name it (before its model mapping). */
  model: string;
  /** The slowest acceptable test of this channel's type, in seconds (0 = no limit). */
  thresholdSeconds: number;
  /** True when the upstream answered, but slower than `thresholdSeconds`. */
  slow: boolean;
  /** The key tested, on a multi-key channel. */
  keyId?: number;
}

interface UpstreamAnswer {
  status: number;
  text: string;
}

/** One HTTP call with the check deadline; also stops when `signal` aborts (shutdown). */
async function callUpstream(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<UpstreamAnswer> {
  const deadline = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const response = await undiciRequest(url, { ...init, signal: signal ? AbortSignal.any([deadline, signal]) : deadline });
    return { status: response.statusCode, text: await response.body.text() };
  } catch (error) {
    if (deadline.aborted) throw new Error(`upstream did not answer within ${CHECK_TIMEOUT_MS / 1000} s`, { cause: error });
    throw new Error(`could not reach upstream: ${(error as Error).message}`, { cause: error });
  }
}

/** "message (type t, code c)", from OpenAI's error object. */
function describeFailure(failure: UpstreamFailure): string {
  const detail = [failure.type ? `type ${failure.type}` : '', failure.code != null ? `code ${failure.code}` : '']
    .filter(Boolean)
    .join(', ');
  return detail ? `${failure.message} (${detail})` : failure.message;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isSuccessStatus = (status: number) => status >= 200 && status < 300;

function baseUrlOf(channel: ChannelRow, fallback?: string): string {
  return (channel.base_url || fallback || findChannelType(Number(channel.type))?.defaultBaseUrl || '').replace(/\/+$/, '');
}

/** The model a test asks for when none is named: the channel's test model while it is one of its models, else its first. */
export function defaultTestModelOf(channel: Pick<ChannelRow, 'models' | 'test_model'>): string {
  const models = splitList(channel.models);
  return channel.test_model && models.includes(channel.test_model) ? channel.test_model : (models[0] ?? FALLBACK_TEST_MODEL);
}

/** `model` (by default the channel's default test model) as the channel's model mapping sends it upstream. */
export function testModelOf(
  channel: Pick<ChannelRow, 'models' | 'model_mapping' | 'test_model'>,
  model = defaultTestModelOf(channel),
): string {
  const mapping = parseJson(channel.model_mapping || '{}') as Record<string, unknown> | undefined;
  const mapped = mapping && typeof mapping === 'object' ? mapping[model] : undefined;
  return typeof mapped === 'string' && mapped ? mapped : model;
}

/** What a channel's adaptor knows of it. */
const configOf = (channel: ChannelRow): ChannelConfig => ({
  type: Number(channel.type),
  key: channel.key,
  baseUrl: channel.base_url ?? '',
  other: channel.other ?? '',
});

type TestOutcome = Pick<ChannelTestResult, 'success' | 'message' | 'failure'>;

/** A whole answer judged by the adaptor: a chat.completion, or its failure. */
function judgeTestAnswer(adaptor: UpstreamAdaptor, call: AdaptorCall, { status, text }: UpstreamAnswer): TestOutcome {
  const decoded = !isSuccessStatus(status)
    ? adaptor.failure(status, text)
    : call.operation === 'rerank'
      ? adaptor.decodeRerank!(text, call)
      : adaptor.decodeChat(text, call);
  return isUpstreamFailure(decoded)
    ? { success: false, message: describeFailure(decoded), failure: decoded }
    : { success: true, message: '' };
}

/** The test over a WebSocket (Spark answers only as a stream): frames decoded to the end, folded into one answer. */
async function testOverWebSocket(
  adaptor: UpstreamAdaptor,
  call: AdaptorCall,
  target: { url: string; method: 'POST' | 'GET'; headers: Record<string, string> },
  body: string,
  signal?: AbortSignal,
): Promise<TestOutcome> {
  const disconnect = new DisconnectSignal();
  const deadline = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  const stop = signal ? AbortSignal.any([deadline, signal]) : deadline;
  const onStop = () => disconnect.abort(new Error(`upstream did not answer within ${CHECK_TIMEOUT_MS / 1000} s`));
  stop.addEventListener('abort', onStop, { once: true });
  try {
    const frames = await openWebSocketCall(target, body, disconnect);
    const decoder = adaptor.decodeChatStream(call);
    const chunks: ChatChunk[] = [];
    for await (const frame of frames) {
      chunks.push(...decoder.push(frame as string));
      if (decoder.failure() || decoder.done()) break;
    }
    frames.destroy();
    chunks.push(...decoder.end());
    const failure = decoder.failure();
    if (failure) return { success: false, message: describeFailure(failure), failure };
    const answer: ChatResponse = assembleChatResponse(
      chunks,
      call,
      decoder.usage() ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 },
    );
    return answer.choices.length > 0 ? { success: true, message: '' } : { success: false, message: 'upstream answered nothing' };
  } catch (error) {
    if (error instanceof WebSocketRefused) {
      const failure = adaptor.failure(error.status, error.body);
      return { success: false, message: describeFailure(failure), failure };
    }
    return { success: false, message: `could not reach upstream: ${(error as Error).message}` };
  } finally {
    stop.removeEventListener('abort', onStop);
  }
}

/**
/**
 * Sends the minimal chat (`hi`, one output token, `model` or else the
 * channel's default test model, as mapped) in the channel's own protocol,
 * through its adaptor, and saves how long it took (even when the upstream
 * refused: the time is real). An answer slower than the type's threshold
 * fails the test. Never disables anything. A multi-key channel is tested with
 * `key`, else its first live key, and the key keeps the outcome too.
 */
export async function testChannel(
  app: FastifyInstance,
  channel: ChannelRow,
  signal?: AbortSignal,
  model = defaultTestModelOf(channel),
  key?: Pick<ChannelKeyRow, 'id' | 'key'>,
): Promise<ChannelTestResult> {
  if (Number(channel.multi_key) === 1) {
    // a multi-key channel is tested with one key: the one asked for, else its first live one
    const chosen = key ?? (await liveChannelKeys(app.ctx.db, Number(channel.id)))[0];
    if (!chosen) {
      const message = 'this channel has no live key';
      if (!signal?.aborted) await recordChannelTest(app.ctx.db, Number(channel.id), { error: message });
      return {
        success: false,
        message,
        seconds: 0,
        sent: false,
        model,
        thresholdSeconds: channelThresholdSecondsOf(app, Number(channel.type)),
        slow: false,
      };
    }
    const result = await testChannelWith(app, { ...channel, key: chosen.key }, signal, model);
    if (!signal?.aborted) await recordChannelKeyError(app.ctx.db, chosen.id, result.success ? '' : result.message || 'test failed');
    return { ...result, keyId: chosen.id };
  }
  return testChannelWith(app, channel, signal, model);
}

async function testChannelWith(
  app: FastifyInstance,
  channel: ChannelRow,
  signal: AbortSignal | undefined,
  model: string,
): Promise<ChannelTestResult> {
  const thresholdSeconds = channelThresholdSecondsOf(app, Number(channel.type));
  const adaptor = adaptorForChannelType(Number(channel.type));
  const testModel = testModelOf(channel, model);
  // a vendor with no chat (Jina, Voyage) is tested with a rerank, and so is a rerank model of one that has both (Bedrock, Cohere)
  const reranks = findChannelType(Number(channel.type))?.noChat === true || /rerank/i.test(testModel);
  const operation = reranks && adaptor?.encodeRerank && adaptor.decodeRerank ? 'rerank' : 'chat';
  if (!adaptor || !adaptor.operations.has(operation)) {
    const message = adaptor ? 'this channel type has no chat to test' : 'this channel type is unknown to this relay';
    return { success: false, message, seconds: 0, sent: false, model, thresholdSeconds, slow: false };
  }
  const config = configOf(channel);
  const started = performance.now();
  let outcome: TestOutcome;
  let sent = true;
  try {
    let credential = credentialFor(adaptor, config);
    if (credential instanceof Promise) credential = await credential;
    const call: AdaptorCall = {
      channel: config,
      operation,
      model: testModel,
      stream: false,
      responseId: 'chatcmpl-channel-test',
      now: Math.floor(Date.now() / 1000),
      credential: isUpstreamFailure(credential) ? undefined : credential,
    };
    let target = isUpstreamFailure(credential) ? credential : adaptor.target(config, call);
    const body = isUpstreamFailure(target)
      ? ''
      : operation === 'rerank'
        ? adaptor.encodeRerank!({ model: call.model, query: 'hi', documents: ['hi'], extra: {} }, call)
        : adaptor.encodeChat({ model: call.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }, call);
    if (!isUpstreamFailure(target) && adaptor.sign) target = await adaptor.sign(target, body, config, call);
    if (isUpstreamFailure(target)) {
      // nothing went out to the vendor (no base URL, a key it cannot read) or its token exchange refused
      sent = isUpstreamFailure(credential);
      outcome = { success: false, message: describeFailure(target), failure: target };
    } else {
      outcome =
        adaptor.transport === 'websocket'
          ? await testOverWebSocket(adaptor, call, target, body, signal)
          : judgeTestAnswer(
              adaptor,
              call,
              await callUpstream(target.url, { method: target.method, headers: target.headers, body }, signal),
            );
    }
  } catch (error) {
    outcome = { success: false, message: (error as Error).message };
  }
  const milliseconds = performance.now() - started;
  // a right answer that came too slowly is a failed test too: the relay's clients would have waited as long
  const slow = sent && outcome.success && thresholdSeconds > 0 && milliseconds > thresholdSeconds * 1000;
  if (slow) outcome = { success: false, message: slowMessage(milliseconds / 1000, thresholdSeconds) };
  // the admin sees the upstream's whole complaint, but never the key, even echoed back
  const message = scrubSecrets(outcome.message, secretsOf(channel.key));
  const testError = outcome.success ? '' : message || 'test failed';
  if (!sent) {
    // nothing went out, so no time to keep; the reason still replaces "untested" in the list
    if (!signal?.aborted) await recordChannelTest(app.ctx.db, Number(channel.id), { error: testError });
    return { ...outcome, message, seconds: 0, sent: false, model, thresholdSeconds, slow: false };
  }
  if (!signal?.aborted)
    await recordChannelTest(app.ctx.db, Number(channel.id), { responseTimeMs: Math.round(milliseconds), error: testError });
  const failure = outcome.failure && { ...outcome.failure, message: scrubSecrets(outcome.failure.message, secretsOf(channel.key)) };
  return { ...outcome, message, failure, seconds: milliseconds / 1000, sent: true, model, thresholdSeconds, slow };
}

const slowMessage = (seconds: number, thresholdSeconds: number) =>
  `response time ${seconds.toFixed(2)} s exceeds the threshold ${thresholdSeconds.toFixed(2)} s`;

/** The slowest acceptable test of a channel of `type`, in seconds (0 = no limit), from ChannelDisableThreshold and ChannelTypeTestThresholds. */
function channelThresholdSecondsOf(app: FastifyInstance, type: number): number {
  const { options } = app.ctx;
  return channelTestThresholdSeconds(type, options.number('ChannelDisableThreshold'), options.json('ChannelTypeTestThresholds'));
}

// ---- balances ----

async function getJson(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const answer = await callUpstream(url, { method: 'GET', headers }, signal);
  if (!isSuccessStatus(answer.status)) throw new Error(describeFailure(openAiFailure(answer.status, answer.text)));
  const body = parseJson(answer.text);
  if (!body || typeof body !== 'object') throw new Error('upstream answered with a body that is not JSON');
  return body as Record<string, unknown>;
}

/** A number, or a numeric string (OpenAI-SB, DeepSeek and SiliconFlow send amounts as text). */
function numberFrom(value: unknown, field: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new Error(`upstream answer has no ${field}`);
  return number;
}

/** `body.data` as an object, or the vendor's own words for why there is none. */
function dataOf(body: Record<string, unknown>): Record<string, unknown> {
  const data = body.data;
  if (data && typeof data === 'object') return data as Record<string, unknown>;
  const said = [body.msg, body.message].find((text) => typeof text === 'string' && text);
  throw new Error(typeof said === 'string' ? said : 'upstream answer has no data');
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** YYYY-MM-DD in the server's local time, as OpenAI's dashboard expects. */
function localDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Reads one kind of balance endpoint at `base`: the figure in `setting.unit`. */
type BalanceFetch<Kind extends BalanceSourceKind> = (
  base: string,
  key: string,
  setting: ChannelBalance & { source: Kind },
  signal?: AbortSignal,
) => Promise<number>;

const UNIT_NAMES: Record<BalanceUnit, string> = { usd: 'USD', cny: 'CNY', cny_per_10000: 'CNY/10000', points: 'points' };

/**
 * One fetcher per kind of balance endpoint (the kinds are common/channelTypes.ts's,
 * where each type's row names its own). https://platform.openai.com/account/billing
 * and the resellers' copies of it answer in the same shape.
 */
const BALANCE_FETCHERS: { [Kind in BalanceSourceKind]: BalanceFetch<Kind> } = {
  /** hard_limit_usd minus this period's usage (which OpenAI reports in cents). */
  'openai-subscription': async (base, key, _setting, signal) => {
    const subscription = await getJson(`${base}/v1/dashboard/billing/subscription`, bearer(key), signal);
    const hardLimit = numberFrom(subscription.hard_limit_usd, 'hard_limit_usd');
    const today = new Date();
    // without a payment method the grant is not monthly: look back 100 days
    const start =
      subscription.has_payment_method === true
        ? new Date(today.getFullYear(), today.getMonth(), 1)
        : new Date(today.getFullYear(), today.getMonth(), today.getDate() - 100);
    const query = new URLSearchParams({ start_date: localDate(start), end_date: localDate(today) });
    const usage = await getJson(`${base}/v1/dashboard/billing/usage?${query.toString()}`, bearer(key), signal);
    return hardLimit - numberFrom(usage.total_usage, 'total_usage') / 100;
  },
  'credit-grants': async (base, key, { field }, signal) =>
    numberFrom((await getJson(`${base}/dashboard/billing/credit_grants`, bearer(key), signal))[field], field),
  'openai-sb': async (base, key, _setting, signal) => {
    const body = await getJson(`${base}/sb-api/user/status?${new URLSearchParams({ api_key: key }).toString()}`, bearer(key), signal);
    return numberFrom(dataOf(body).credit, 'credit');
  },
  aiproxy: async (base, key, _setting, signal) => {
    const body = await getJson(`${base}/api/report/getUserOverview`, { 'api-key': key }, signal);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- AI Proxy's error_code and message, parsed JSON of no fixed type, quoted as String() renders them
    if (body.success !== true) throw new Error(`code: ${String(body.error_code ?? '')}, message: ${String(body.message ?? '')}`);
    return numberFrom((body.data as { totalPoints?: unknown } | undefined)?.totalPoints, 'totalPoints');
  },
  /**
   * https://api-docs.deepseek.com/api/get-user-balance: `balance_infos`, one
   * entry per currency (CNY or USD), amounts as strings. The entry in the
   * row's unit is the balance; money held in another currency cannot be
   * stored in that unit, so the answer is refused instead.
   */
  deepseek: async (base, key, { unit }, signal) => {
    const infos = (await getJson(`${base}/user/balance`, bearer(key), signal)).balance_infos;
    if (!Array.isArray(infos) || infos.length === 0) throw new Error('upstream answer has no balance_infos');
    const wanted = UNIT_NAMES[unit];
    let balance = 0;
    const elsewhere: string[] = [];
    for (const info of infos as Array<{ currency?: unknown; total_balance?: unknown } | null>) {
      const amount = numberFrom(info?.total_balance, 'total_balance');
      if (info?.currency === wanted) balance += amount;
      else if (amount !== 0) elsewhere.push(`${String(info?.total_balance)} ${String(info?.currency)}`);
    }
    if (elsewhere.length > 0)
      throw new Error(
        `this account's balance is held in another currency (${elsewhere.join(', ')}); this channel type records balances in ${wanted}`,
      );
    return balance;
  },
  /** https://platform.moonshot.cn/docs/api/balance: cash plus vouchers. */
  moonshot: async (base, key, _setting, signal) =>
    numberFrom(dataOf(await getJson(`${base}/v1/users/me/balance`, bearer(key), signal)).available_balance, 'available_balance'),
  /** https://openrouter.ai/docs/api/api-reference/credits/get-credits: credits bought minus credits used. */
  openrouter: async (base, key, _setting, signal) => {
    const data = dataOf(await getJson(`${base}/api/v1/credits`, bearer(key), signal));
    return numberFrom(data.total_credits, 'total_credits') - numberFrom(data.total_usage, 'total_usage');
  },
  /** https://docs.siliconflow.cn/en/api-reference/userinfo/get-user-info: granted plus charged balance, as text. */
  siliconflow: async (base, key, _setting, signal) =>
    numberFrom(dataOf(await getJson(`${base}/v1/user/info`, bearer(key), signal)).totalBalance, 'totalBalance'),
  /**
   * https://novita.ai/docs/api-reference/basic-get-user-balance: what the account can spend (its top-up plus its
   * credit limit), as text in ten-thousandths of a US dollar.
   */
  novita: async (base, key, _setting, signal) =>
    numberFrom((await getJson(`${base}/openapi/v1/billing/balance/detail`, bearer(key), signal)).availableBalance, 'availableBalance') /
    10_000,
  /** https://platform.stepfun.com/docs/zh/api-reference/accounts/get: the available balance (top-ups and vouchers). */
  stepfun: async (base, key, _setting, signal) =>
    numberFrom((await getJson(`${base}/v1/accounts`, bearer(key), signal)).balance, 'balance'),
};

/** The kinds of balance endpoint this file can read (a test holds them to the table's). */
export const BALANCE_SOURCE_KINDS: readonly BalanceSourceKind[] = Object.keys(BALANCE_FETCHERS) as BalanceSourceKind[];

/** Reads a balance as its type's row describes it. */
function fetchBalance(setting: ChannelBalance, base: string, key: string, signal?: AbortSignal): Promise<number> {
  const read = BALANCE_FETCHERS[setting.source] as BalanceFetch<BalanceSourceKind>;
  return read(base, key, setting, signal);
}

/** The unit a vendor's other platform answers in, when the channel points there and it differs from the row's. */
function otherCurrencyOf(setting: ChannelBalance, base: string): BalanceUnit | undefined {
  let host: string;
  try {
    host = new URL(base).host.toLowerCase();
  } catch {
    return undefined;
  }
  const unit = setting.otherCurrencyHosts?.[host];
  return unit && unit !== setting.unit ? unit : undefined;
}

/** Asks the upstream for the channel's balance and saves it. Never disables anything. */
export async function updateChannelBalance(
  app: FastifyInstance,
  channel: ChannelRow,
  signal?: AbortSignal,
): Promise<{ balance: number } | { error: string }> {
  const type = findChannelType(Number(channel.type));
  const setting = type?.balance;
  const adaptorSource = adaptorForChannelType(Number(channel.type))?.balance;
  if (!setting && !adaptorSource) return { error: 'balance query is not supported for this channel type' };
  if (Number(channel.multi_key) === 1) {
    // a multi-key channel's balance is its first live key's (keys of one account share it)
    const first = (await liveChannelKeys(app.ctx.db, Number(channel.id)))[0];
    if (!first) return { error: 'this channel has no live key' };
    channel = { ...channel, key: first.key };
  }
  let balance: number;
  try {
    if (setting) {
      const base = baseUrlOf(channel, setting.host);
      if (!base) return { error: 'this channel has no base URL' };
      const otherUnit = otherCurrencyOf(setting, base);
      if (otherUnit) {
        return {
          error: `${new URL(base).host} reports balances in ${UNIT_NAMES[otherUnit]}; ${type.label} balances are recorded in ${UNIT_NAMES[setting.unit]}`,
        };
      }
      balance = await fetchBalance(setting, base, channel.key, signal);
    } else {
      // the vendor's own balance endpoint, as its adaptor describes it
      const target = adaptorSource!.request(configOf(channel));
      const answer = await callUpstream(target.url, { method: target.method, headers: target.headers }, signal);
      const parsed = adaptorSource!.parse(answer.status, answer.text);
      if (isUpstreamFailure(parsed)) throw new Error(describeFailure(parsed));
      balance = parsed;
    }
  } catch (error) {
    return { error: scrubSecrets((error as Error).message, secretsOf(channel.key)) };
  }
  if (!signal?.aborted) await recordChannelBalance(app.ctx.db, Number(channel.id), balance);
  return { balance };
}

// ---- jobs ----

type JobName = 'test-all' | 'balance-all' | 'health';

interface JobState {
  running: Set<JobName>;
  /** The console's view of the test-all and balance-all runs: the latest few, newest last. */
  progress: Map<string, ChannelJob>;
  inFlight: Set<Promise<unknown>>;
  /** Aborted when the app closes, so no job outlives the database. */
  stop: AbortController;
  timer?: NodeJS.Timeout;
}

// keyed by the context object, which the root app and its encapsulated route plugins share
const jobStates = new WeakMap<AppContext, JobState>();

function jobStateOf(app: FastifyInstance): JobState {
  let state = jobStates.get(app.ctx);
  if (!state) {
    state = { running: new Set(), progress: new Map(), inFlight: new Set(), stop: new AbortController() };
    jobStates.set(app.ctx, state);
  }
  return state;
}

/** The lease each job runs under (job_leases.name). */
const LEASE_NAMES: Record<JobName, string> = {
  'test-all': 'channel-test-all',
  'balance-all': 'channel-balance-all',
  health: 'channel-health',
};

/**
 * Runs `work` unless a job of that name is already running here or, under its
 * lease, on another worker: undefined when it runs here, a JobElsewhere
 * rejection when elsewhere. `periodMs` marks a periodic tick (the lease is
 * kept until the next one is due); `detail` is published with the claim.
 */
function runJob<T>(
  app: FastifyInstance,
  name: JobName,
  work: (signal: AbortSignal, held: HeldJob) => Promise<T>,
  options: { periodMs?: number; detail?: string } = {},
): Promise<T> | undefined {
  const state = jobStateOf(app);
  if (state.running.has(name) || state.stop.signal.aborted) return undefined;
  state.running.add(name);
  const job = (async () => {
    const tick = Date.now();
    const held = await app.ctx.jobs.claim(LEASE_NAMES[name], options.detail);
    if (!held) throw new JobElsewhere();
    try {
      return await work(AbortSignal.any([state.stop.signal, held.signal]), held);
    } finally {
      await held.release(options.periodMs ? { until: nextTickDue(tick, options.periodMs) } : {});
    }
  })().finally(() => state.running.delete(name)); // whatever happened, the next run may start
  state.inFlight.add(job);
  job.then(
    () => state.inFlight.delete(job),
    () => state.inFlight.delete(job),
  );
  return job;
}

/** Thrown when another worker holds the job's lease. */
class JobElsewhere extends Error {
  constructor() {
    super('running on another worker');
  }
}

/** Finished jobs kept for the console to read back (per process). */
const KEPT_JOBS = 20;

/** What startJob answers: the job (the one already running, when `started` is false). */
export interface StartedJob {
  started: boolean;
  job: ChannelJob;
}

/** The run another worker shares through the lease of `name`, if it shared one. */
async function sharedJobOf(app: FastifyInstance, name: 'test-all' | 'balance-all'): Promise<ChannelJob | undefined> {
  const lease = await app.ctx.jobs.read(LEASE_NAMES[name]);
  if (!lease?.detail) return undefined;
  try {
    return JSON.parse(lease.detail) as ChannelJob;
  } catch {
    return undefined;
  }
}

/**
 * A job's progress as the console reads it (`GET /api/channel/jobs/:id`):
 * kept here when this worker runs it, else the latest run of each kind as its
 * worker shares it; undefined when unknown.
 */
export async function channelJobOf(app: FastifyInstance, id: string): Promise<ChannelJob | undefined> {
  const job = jobStateOf(app).progress.get(id);
  if (job) return { ...job, failures: [...job.failures] };
  for (const name of ['test-all', 'balance-all'] as const) {
    const shared = await sharedJobOf(app, name);
    if (shared?.id === id) return shared;
  }
  return undefined;
}

/** Reports a job's progress as it visits channels. */
interface JobProgress {
  begin(total: number): void;
  visited(channel: ChannelRow, failure?: string): void;
}

/**
 * Starts a job in the background with a progress record the console can
 * poll. When one of that name is running here or on another worker, answers
 * that one instead. A started job is answered once it has counted its
 * channels, so its first answer already reads "0 of N", never "0 of 0".
 */
async function startJob(
  app: FastifyInstance,
  name: 'test-all' | 'balance-all',
  work: (signal: AbortSignal, progress: JobProgress) => Promise<unknown>,
): Promise<StartedJob | undefined> {
  const state = jobStateOf(app);
  const kind = name === 'test-all' ? 'test' : 'balance';
  const running = [...state.progress.values()].find((job) => job.kind === kind && job.state === 'running');
  const record: ChannelJob = {
    id: randomUUID(),
    kind,
    state: 'running',
    done: 0,
    total: 0,
    failures: [],
    started_at: Math.floor(Date.now() / 1000),
    finished_at: 0,
  };
  const finish = () => {
    if (record.state === 'done') return;
    record.state = 'done';
    record.finished_at = Math.floor(Date.now() / 1000);
  };
  let shareProgress = () => {};
  const progress: JobProgress = {
    begin: (total) => {
      record.total = total;
      shareProgress();
      settleStart('started');
    },
    visited: (channel, failure) => {
      record.done += 1;
      if (failure !== undefined) record.failures.push({ channel_id: Number(channel.id), name: channel.name, message: failure });
      shareProgress();
    },
  };
  let settleStart: (outcome: 'started' | 'elsewhere' | Error) => void = () => {};
  const start = new Promise<'started' | 'elsewhere' | Error>((resolve) => (settleStart = resolve));
  const job = runJob(
    app,
    name,
    async (signal, held) => {
      shareProgress = () => held.share(JSON.stringify(record));
      try {
        const result = await work(signal, progress);
        // a run that ended before it counted anything (stopped) is still one that started
        settleStart('started');
        return result;
      } finally {
        finish();
        shareProgress(); // the lease is let go with the finished record
      }
    },
    { detail: JSON.stringify(record) },
  );
  if (!job) return running ? { started: false, job: { ...running, failures: [...running.failures] } } : undefined;
  // seen here while the lease is claimed, so a second click meanwhile is told this run
  state.progress.set(record.id, record);
  job.then(finish, (error: unknown) => {
    if (error instanceof JobElsewhere) return settleStart('elsewhere');
    finish();
    // before the start (the lease could not be claimed: the database) the caller hears it; after, the log does
    settleStart(error instanceof Error ? error : new Error(String(error)));
    app.log.error({ err: error, job: name }, 'channel job failed');
  });
  const outcome = await start;
  if (outcome !== 'started') {
    state.progress.delete(record.id);
    if (outcome instanceof Error) throw outcome;
    const elsewhere = await sharedJobOf(app, name);
    return { started: false, job: elsewhere ?? { ...record, id: '' } };
  }
  for (const id of state.progress.keys()) {
    if (state.progress.size <= KEPT_JOBS) break;
    state.progress.delete(id);
  }
  return { started: true, job: { ...record, failures: [...record.failures] } };
}

/** Resolves once every channel job running now has finished (shutdown; tests). */
export async function channelJobsSettled(app: FastifyInstance): Promise<void> {
  await Promise.allSettled([...jobStateOf(app).inFlight]);
}

function disableReason(result: ChannelTestResult): string | undefined {
  if (!result.sent) return undefined;
  if (result.failure?.deadKey) return result.message;
  if (result.slow) return slowMessage(result.seconds, result.thresholdSeconds);
  return undefined;
}

async function testEnabledChannels(
  app: FastifyInstance,
  signal: AbortSignal,
  progress: JobProgress,
  notifyWhenDone: boolean,
): Promise<void> {
  const channels = await listChannelsToCheck(app.ctx.db, { status: ChannelStatus.enabled });
  progress.begin(channels.length);
  const disabled: number[] = [];
  for (const channel of channels) {
    if (signal.aborted) return;
    const result = await testChannel(app, channel, signal);
    if (signal.aborted) return;
    progress.visited(channel, result.success ? undefined : result.message || 'test failed');
    const reason = disableReason(result);
    if (reason && result.keyId !== undefined && result.failure?.deadKey) {
      // a dead key of many is set aside alone (the channel goes only with its last key)
      await disableChannelKeyAutomatically(app, Number(channel.id), result.keyId, reason);
    } else if (reason && (await disableChannelAutomatically(app, Number(channel.id), reason))) {
      disabled.push(Number(channel.id));
    }
  }
  if (!notifyWhenDone) return;
  // each disabled channel already had its own e-mail with name and reason
  const summary = disabled.length ? `Disabled: ${disabled.map((id) => `#${id}`).join(', ')}.` : 'No channel was disabled.';
  await notifyRoot(app, 'channel test finished', `<p>${channels.length} enabled channel(s) tested. ${summary}</p>`).catch(
    (error: unknown) => app.log.warn({ err: error }, 'could not e-mail root that the channel test finished'),
  );
}

/**
 * Tests every enabled channel in the background. A dead key or a test slower
 * than its type's threshold (channelTestThresholdSeconds) disables the channel,
 * when AutomaticDisableChannelEnabled allows it. When a test-all is
 * already running in this process, `started` is false and `job` is that
 * run; undefined only while the app is closing.
 */
export function startTestingAllChannels(app: FastifyInstance, options: { notifyWhenDone: boolean }): Promise<StartedJob | undefined> {
  return startJob(app, 'test-all', (signal, progress) => testEnabledChannels(app, signal, progress, options.notifyWhenDone));
}

/**
 * Refreshes the balance of every enabled channel whose type has a balance
 * endpoint, in the background. An empty balance disables the channel when
 * AutomaticDisableChannelEnabled allows it. When one is already running,
 * `started` is false and `job` is that run.
 */
export function startUpdatingAllBalances(app: FastifyInstance): Promise<StartedJob | undefined> {
  return startJob(app, 'balance-all', async (signal, progress) => {
    const channels = await listChannelsToCheck(app.ctx.db, { status: ChannelStatus.enabled, types: BALANCE_CHANNEL_TYPES });
    progress.begin(channels.length);
    for (const channel of channels) {
      if (signal.aborted) return;
      const result = await updateChannelBalance(app, channel, signal);
      if (signal.aborted) return;
      progress.visited(channel, 'error' in result ? result.error : undefined);
      if ('error' in result) app.log.info({ channelId: Number(channel.id), error: result.error }, 'balance query failed');
      else if (result.balance <= 0) await disableChannelAutomatically(app, Number(channel.id), 'insufficient balance');
    }
  });
}

export interface HealthPassResult {
  /** Ids of the system-disabled channels that were tested. */
  tested: number[];
  /** Ids of those that passed within the threshold and are enabled again. */
  reenabled: number[];
  /** Ids of the keys of multi-key channels the system had set aside, tested. */
  keysTested: number[];
  /** Ids of those keys that passed and are live again. */
  keysReenabled: number[];
}

/**
 * Re-tests the channels the system disabled (never those an admin disabled)
 * and re-enables each that passes within its type's threshold; likewise the
 * keys it set aside on multi-key channels. Resolves to
 * undefined when a pass is already running (here or on another worker).
 * `periodMs`: a tick of the timer, whose lease is kept until the next tick.
 */
export async function runHealthPass(app: FastifyInstance, periodMs?: number): Promise<HealthPassResult | undefined> {
  const pass = runJob(
    app,
    'health',
    async (signal) => {
      const channels = await listChannelsToCheck(app.ctx.db, { status: ChannelStatus.disabled, autoDisabled: true });
      const result: HealthPassResult = { tested: [], reenabled: [], keysTested: [], keysReenabled: [] };
      for (const channel of channels) {
        if (signal.aborted) break;
        // a multi-key channel is tested with its first live key; one with none left comes back with its first key that passes, below
        const test = await testChannel(app, channel, signal);
        if (!test.sent || signal.aborted) continue;
        result.tested.push(Number(channel.id));
        // a slow answer is already a failed test
        if (test.success && (await reenableChannelAutomatically(app, Number(channel.id)))) result.reenabled.push(Number(channel.id));
      }
      // the keys the system set aside, each tested on its own; a key that passes brings its channel back with it
      for (const key of await listAutoDisabledKeys(app.ctx.db)) {
        if (signal.aborted) break;
        const channel = await findChannel(app.ctx.db, Number(key.channel_id));
        if (!channel) continue;
        const test = await testChannel(app, channel, signal, undefined, key);
        if (!test.sent || signal.aborted) continue;
        result.keysTested.push(Number(key.id));
        const healthy = test.success; // a slow answer is already a failed test
        if (!healthy || !(await reenableChannelKeyAutomatically(app, Number(channel.id), Number(key.id)))) continue;
        result.keysReenabled.push(Number(key.id));
        if (Number(channel.status) === ChannelStatus.disabled && !result.reenabled.includes(Number(channel.id)))
          result.reenabled.push(Number(channel.id));
      }
      return result;
    },
    { periodMs },
  );
  return pass?.catch((error: unknown) => {
    if (error instanceof JobElsewhere) return undefined;
    throw error;
  });
}

/**
 * Runs the health pass every `intervalSeconds` (0 = never) once the app is
 * ready, and on close stops the timer and every running job before the
 * database goes away (preClose runs before the onClose hook that closes it).
 */
export function scheduleChannelHealthChecks(app: FastifyInstance, intervalSeconds: number): void {
  const state = jobStateOf(app);
  if (intervalSeconds > 0) {
    app.addHook('onReady', () => {
      state.timer = setInterval(() => {
        runHealthPass(app, intervalSeconds * 1000).catch((error: unknown) => app.log.error({ err: error }, 'channel health pass failed'));
      }, intervalSeconds * 1000);
      state.timer.unref(); // never keeps the process alive on its own
      return Promise.resolve();
    });
  }
  app.addHook('preClose', async () => {
    clearInterval(state.timer);
    state.stop.abort();
    await channelJobsSettled(app);
    // the relay's last key tallies, while the database is still open
    await channelKeyUsageOf(app).flush();
  });
}
