// A channel's test: the minimal request in the channel's own protocol, through
// its adaptor (a chat, or a rerank for a vendor with no chat), its answer
// judged and timed against the type's threshold, and the outcome recorded on
// the channel (and on the key tested, on a multi-key channel). Nothing here
// disables or re-enables anything: the jobs (channelHealth.ts) and
// autoDisable.ts decide that from the result.
import type { Kysely } from 'kysely';
import { findChannelType } from '../../common/channelTypes';
import { channelTestThresholdSeconds } from '../../common/options';
import type { Database } from '../db/database';
import { assembleChatResponse } from '../protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatResponse,
  type UpstreamAdaptor,
  type UpstreamFailure,
} from '../protocols/types';
import { adaptorForChannelType } from '../protocols/upstream';
import { recordChannelTest, splitList, type ChannelRow } from '../repositories/channels';
import { liveChannelKeys, maskKey, recordChannelKeyError, type ChannelKeyRow } from '../repositories/channelKeys';
import type { OptionStore } from '../services/optionStore';
import { scrubSecrets } from '../relay/scrub';
import { secretsOf } from '../relay/attempt';
import { credentialFor } from '../relay/credentials';
import { DisconnectSignal } from '../relay/upstream';
import { openWebSocketCall, WebSocketRefused } from '../relay/websocketUpstream';
import { callUpstream, CHECK_TIMEOUT_MS, configOf, describeFailure, isSuccessStatus, parseJson, type UpstreamAnswer } from './checkCall';

/** The model a test asks for when a channel lists none. */
const FALLBACK_TEST_MODEL = 'gpt-3.5-turbo';

/** What a channel test needs: where to record its outcome, and the options that set its threshold. */
export interface ChannelTestDeps {
  db: Kysely<Database>;
  options: OptionStore;
}

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
  /** The answer's first words (at most REPLY_EXCERPT_CHARS characters, on one line); '' when it said nothing readable. */
  reply: string;
  /** The key that was used, masked (never whole); '' when it has no tail to show (a JSON key file). */
  keyMasked: string;
}

/** The most characters of an answer a test shows. */
export const REPLY_EXCERPT_CHARS = 80;

/** The first words of a chat answer on one line: its text (or, with none, its reasoning), cut at REPLY_EXCERPT_CHARS. */
export function replyExcerptOf(answer: ChatResponse): string {
  const message = answer.choices[0]?.message;
  const said = typeof message?.content === 'string' && message.content.trim() ? message.content : (message?.reasoning_content ?? '');
  const characters = [...said.replace(/\s+/g, ' ').trim()];
  return characters.length > REPLY_EXCERPT_CHARS ? `${characters.slice(0, REPLY_EXCERPT_CHARS).join('')}…` : characters.join('');
}

/** The key of a test, masked as the key list shows it; nothing for a JSON key file, whose tail says nothing. */
function keyMaskOf(channel: ChannelRow): string {
  if (!channel.key || findChannelType(Number(channel.type))?.keyKind === 'service-account-json') return '';
  return maskKey(channel.key);
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

type TestOutcome = Pick<ChannelTestResult, 'success' | 'message' | 'failure'> & { reply?: string };

/** A whole answer judged by the adaptor: a chat.completion, or its failure. */
function judgeTestAnswer(adaptor: UpstreamAdaptor, call: AdaptorCall, { status, text }: UpstreamAnswer): TestOutcome {
  let decoded;
  if (!isSuccessStatus(status)) decoded = adaptor.failure(status, text);
  else if (call.operation === 'rerank') decoded = adaptor.decodeRerank!(text, call);
  else decoded = adaptor.decodeChat(text, call);
  if (isUpstreamFailure(decoded)) return { success: false, message: describeFailure(decoded), failure: decoded };
  return { success: true, message: '', ...('choices' in decoded ? { reply: replyExcerptOf(decoded) } : {}) };
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
    return answer.choices.length > 0
      ? { success: true, message: '', reply: replyExcerptOf(answer) }
      : { success: false, message: 'upstream answered nothing' };
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
 * Sends the minimal chat (`hi`, one output token, `model` or else the
 * channel's default test model, as mapped) in the channel's own protocol,
 * through its adaptor, and saves how long it took (even when the upstream
 * refused: the time is real). An answer slower than the type's threshold
 * fails the test. Never disables anything. A multi-key channel is tested with
 * `key`, else its first live key, and the key keeps the outcome too.
 */
export async function testChannel(
  deps: ChannelTestDeps,
  channel: ChannelRow,
  signal?: AbortSignal,
  model = defaultTestModelOf(channel),
  key?: Pick<ChannelKeyRow, 'id' | 'key'>,
): Promise<ChannelTestResult> {
  if (Number(channel.multi_key) === 1) {
    // a multi-key channel is tested with one key: the one asked for, else its first live one
    const chosen = key ?? (await liveChannelKeys(deps.db, Number(channel.id)))[0];
    if (!chosen) {
      const message = 'this channel has no live key';
      if (!signal?.aborted) await recordChannelTest(deps.db, Number(channel.id), { error: message });
      return {
        success: false,
        message,
        seconds: 0,
        sent: false,
        model,
        thresholdSeconds: channelThresholdSecondsOf(deps.options, Number(channel.type)),
        slow: false,
        reply: '',
        keyMasked: '',
      };
    }
    const result = await testChannelWith(deps, { ...channel, key: chosen.key }, signal, model);
    if (!signal?.aborted) await recordChannelKeyError(deps.db, chosen.id, result.success ? '' : result.message || 'test failed');
    return { ...result, keyId: chosen.id };
  }
  return testChannelWith(deps, channel, signal, model);
}

async function testChannelWith(
  deps: ChannelTestDeps,
  channel: ChannelRow,
  signal: AbortSignal | undefined,
  model: string,
): Promise<ChannelTestResult> {
  const thresholdSeconds = channelThresholdSecondsOf(deps.options, Number(channel.type));
  const testModel = testModelOf(channel, model);
  const plan = testPlanOf(channel, testModel);
  const keyMasked = keyMaskOf(channel);
  if ('unfit' in plan)
    return { success: false, message: plan.unfit, seconds: 0, sent: false, model, thresholdSeconds, slow: false, reply: '', keyMasked };
  const started = performance.now();
  const sentTest = await sendTestRequest(plan.adaptor, configOf(channel), plan.operation, testModel, signal);
  const milliseconds = performance.now() - started;
  let outcome = sentTest.outcome;
  // a right answer that came too slowly is a failed test too: the relay's clients would have waited as long
  const slow = sentTest.sent && outcome.success && thresholdSeconds > 0 && milliseconds > thresholdSeconds * 1000;
  if (slow) outcome = { success: false, message: slowMessage(milliseconds / 1000, thresholdSeconds) };
  // the admin sees the upstream's whole complaint, but never the key, even echoed back
  const message = scrubSecrets(outcome.message, secretsOf(channel.key));
  // a slow answer still said something: its words are shown beside the failure
  const reply = scrubSecrets(sentTest.outcome.reply ?? '', secretsOf(channel.key));
  const testError = outcome.success ? '' : message || 'test failed';
  if (!sentTest.sent) {
    // nothing went out, so no time to keep; the reason still replaces "untested" in the list
    if (!signal?.aborted) await recordChannelTest(deps.db, Number(channel.id), { error: testError });
    return { ...outcome, message, seconds: 0, sent: false, model, thresholdSeconds, slow: false, reply, keyMasked };
  }
  if (!signal?.aborted)
    await recordChannelTest(deps.db, Number(channel.id), { responseTimeMs: Math.round(milliseconds), error: testError });
  const failure = outcome.failure && { ...outcome.failure, message: scrubSecrets(outcome.failure.message, secretsOf(channel.key)) };
  return { ...outcome, message, failure, seconds: milliseconds / 1000, sent: true, model, thresholdSeconds, slow, reply, keyMasked };
}

/** The adaptor a test of `channel` goes through and what it asks of it, or why the channel's type cannot be tested. */
function testPlanOf(
  channel: ChannelRow,
  testModel: string,
): { adaptor: UpstreamAdaptor; operation: 'chat' | 'rerank' } | { unfit: string } {
  const adaptor = adaptorForChannelType(Number(channel.type));
  // a vendor with no chat (Jina, Voyage) is tested with a rerank, and so is a rerank model of one that has both (Bedrock, Cohere)
  const reranks = findChannelType(Number(channel.type))?.noChat === true || /rerank/i.test(testModel);
  const operation = reranks && adaptor?.encodeRerank && adaptor.decodeRerank ? 'rerank' : 'chat';
  if (!adaptor) return { unfit: 'this channel type is unknown to this relay' };
  if (!adaptor.operations.has(operation)) return { unfit: 'this channel type has no chat to test' };
  return { adaptor, operation };
}

/** A test's answer is kept short, yet long enough that its first words show the operator who answered (a cent at most). */
const TEST_MAX_TOKENS = 16;

/** The test's body in the adaptor's protocol: a one-document rerank, or a short chat. */
function encodeTestBody(adaptor: UpstreamAdaptor, call: AdaptorCall): string {
  return call.operation === 'rerank'
    ? adaptor.encodeRerank!({ model: call.model, query: 'hi', documents: ['hi'], extra: {} }, call)
    : adaptor.encodeChat({ model: call.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: TEST_MAX_TOKENS }, call);
}

/**
 * Builds, signs and sends the test request: what came of it, and whether it
 * went out (false when the adaptor could not address the vendor: no base URL,
 * a key it cannot read). A refused token exchange counts as sent.
 */
async function sendTestRequest(
  adaptor: UpstreamAdaptor,
  config: ChannelConfig,
  operation: 'chat' | 'rerank',
  testModel: string,
  signal: AbortSignal | undefined,
): Promise<{ outcome: TestOutcome; sent: boolean }> {
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
    const body = isUpstreamFailure(target) ? '' : encodeTestBody(adaptor, call);
    if (!isUpstreamFailure(target) && adaptor.sign) target = await adaptor.sign(target, body, config, call);
    if (isUpstreamFailure(target)) {
      // nothing went out to the vendor (no base URL, a key it cannot read) or its token exchange refused
      return { outcome: { success: false, message: describeFailure(target), failure: target }, sent: isUpstreamFailure(credential) };
    }
    const outcome =
      adaptor.transport === 'websocket'
        ? await testOverWebSocket(adaptor, call, target, body, signal)
        : judgeTestAnswer(adaptor, call, await callUpstream(target.url, { method: target.method, headers: target.headers, body }, signal));
    return { outcome, sent: true };
  } catch (error) {
    return { outcome: { success: false, message: (error as Error).message }, sent: true };
  }
}

/** Why a test failed for being slow: its time against the threshold. */
export const slowMessage = (seconds: number, thresholdSeconds: number) =>
  `response time ${seconds.toFixed(2)} s exceeds the threshold ${thresholdSeconds.toFixed(2)} s`;

/** The slowest acceptable test of a channel of `type`, in seconds (0 = no limit), from ChannelDisableThreshold and ChannelTypeTestThresholds. */
function channelThresholdSecondsOf(options: OptionStore, type: number): number {
  return channelTestThresholdSeconds(type, options.number('ChannelDisableThreshold'), options.json('ChannelTypeTestThresholds'));
}
