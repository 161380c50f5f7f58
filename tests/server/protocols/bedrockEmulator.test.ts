// The Bedrock emulator driven over real HTTP by the Bedrock adaptor: the
// emulator's signature check is real (a changed body, another secret, an
// unknown access key, an old signature are each refused with AWS's 403), and
// the usage the adaptor decodes, whole or from the event stream, is exactly
// what the emulator reported.
import { request } from 'undici';
import { MessagesUsageWatcher } from '../../../server/protocols/inbound/anthropicMessages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bedrockAdaptor } from '../../../server/protocols/upstream/bedrock';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type HttpTarget,
} from '../../../server/protocols/types';
import {
  BEDROCK_ACCESS_KEY,
  BEDROCK_CHANNELS,
  BEDROCK_REGION,
  BEDROCK_SECRET_KEY,
  startBedrockEmulator,
  type BedrockEmulator,
} from '../../support/emulators/bedrock';

const [IAM] = BEDROCK_CHANNELS;
let emulator: BedrockEmulator;

beforeAll(async () => {
  emulator = await startBedrockEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const channel = (key = IAM.key): ChannelConfig => ({ type: 33, key, baseUrl: emulator.baseUrl, other: '' });
const callOf = (stream: boolean, now = Math.floor(Date.now() / 1000)): AdaptorCall => ({
  operation: 'chat',
  model: IAM.chatModel,
  stream,
  responseId: 'chatcmpl-emulator',
  now,
});
const CHAT: ChatRequest = { model: IAM.chatModel, messages: [{ role: 'user', content: 'hello emulator' }] };

async function signed(config: ChannelConfig, call: AdaptorCall, body: string): Promise<HttpTarget> {
  const target = bedrockAdaptor.target(config, call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const done = await bedrockAdaptor.sign!(target, body, config, call);
  if (isUpstreamFailure(done)) throw new Error(done.message);
  return done;
}

async function send(target: HttpTarget, body: string) {
  const answer = await request(target.url, { method: target.method, headers: target.headers, body });
  return { status: answer.statusCode, headers: answer.headers, bytes: Buffer.from(await answer.body.arrayBuffer()) };
}

describe('the Bedrock emulator checks SigV4 as AWS does', () => {
  it('answers a call the adaptor signed, and the decoded usage is what it reported', async () => {
    const call = callOf(false);
    const body = bedrockAdaptor.encodeChat(CHAT, call);
    const answer = await send(await signed(channel(), call, body), body);
    expect(answer.status).toBe(200);
    const decoded = bedrockAdaptor.decodeChat(answer.bytes.toString('utf8'), call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].message.content).toBe('Hello from Bedrock, you said: hello emulator');
    const reported = emulator.reported.at(-1)!;
    expect(decoded.usage).toEqual({
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      total_tokens: reported.promptTokens + reported.completionTokens,
    });
  });

  it('refuses a body changed after signing, another secret, an unknown key and an old signature, each as a dead key', async () => {
    const call = callOf(false);
    const body = bedrockAdaptor.encodeChat(CHAT, call);
    const cases: Array<[string, Promise<HttpTarget>, string, RegExp]> = [
      ['changed body', signed(channel(), call, body), body.replace('hello', 'HELLO'), /signature we calculated does not match/],
      [
        'another secret',
        signed(channel(`${BEDROCK_ACCESS_KEY}|wrong/secret|${BEDROCK_REGION}`), call, body),
        body,
        /signature we calculated does not match/,
      ],
      [
        'unknown key',
        signed(channel(`AKIAUNKNOWN000000000|${BEDROCK_SECRET_KEY}|${BEDROCK_REGION}`), call, body),
        body,
        /security token included in the request is invalid/,
      ],
      ['old signature', signed(channel(), callOf(false, call.now - 3600), body), body, /Signature expired/],
    ];
    for (const [name, target, sent, words] of cases) {
      const answer = await send(await target, sent);
      expect(answer.status, name).toBe(403);
      expect(answer.headers['x-amzn-errortype'], name).toMatch(/^(InvalidSignatureException|UnrecognizedClientException):/);
      const failure = bedrockAdaptor.failure(answer.status, answer.bytes.toString('utf8'));
      expect(failure.message, name).toMatch(words);
      expect(failure.deadKey, name).toBe(true);
    }
  });

  it('verifies a session token signed with the call', async () => {
    const config = channel(`${IAM.key}|IQoJb3JpZ2luX2VjEXAMPLE`);
    const call = callOf(false);
    const body = bedrockAdaptor.encodeChat(CHAT, call);
    const target = await signed(config, call, body);
    expect((await send(target, body)).status).toBe(200);
    expect(emulator.requests.at(-1)!.headers['x-amz-security-token']).toBe('IQoJb3JpZ2luX2VjEXAMPLE');
  });

  it('streams the binary event stream; the decoder reads it as it comes', async () => {
    const call = callOf(true);
    const body = bedrockAdaptor.encodeChat({ ...CHAT, stream: true }, call);
    const target = await signed(channel(), call, body);
    const answer = await request(target.url, { method: target.method, headers: target.headers, body });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/vnd.amazon.eventstream');
    const decoder = bedrockAdaptor.decodeChatStream(call);
    const chunks: ChatChunk[] = [];
    for await (const piece of answer.body) chunks.push(...decoder.push(piece as Buffer));
    chunks.push(...decoder.end());
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello from Bedrock, you said: hello emulator');
    expect(decoder.done()).toBe(true);
    const reported = emulator.reported.at(-1)!;
    expect(decoder.usage()).toEqual({
      promptTokens: reported.promptTokens,
      completionTokens: reported.completionTokens,
      cachedPromptTokens: 0,
      cacheCreationTokens: 0,
    });
  });
});

describe("the Bedrock emulator's InvokeModel for Claude's Messages flavour, signature checked", () => {
  const native = bedrockAdaptor.native!;
  const MESSAGES = JSON.stringify({ model: IAM.chatModel, max_tokens: 100, messages: [{ role: 'user', content: 'hello invoke' }] });

  async function nativeSigned(call: AdaptorCall, body: string): Promise<HttpTarget> {
    const target = native.target(channel(), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const done = await bedrockAdaptor.sign!(target, body, channel(), call);
    if (isUpstreamFailure(done)) throw new Error(done.message);
    return done;
  }

  it("answers a signed invoke with Anthropic's Messages JSON, and refuses the body changed after signing", async () => {
    const call = callOf(false);
    const body = native.encode(MESSAGES, {}, call);
    const target = await nativeSigned(call, body);
    const answer = await send(target, body);
    expect(answer.status).toBe(200);
    const message = JSON.parse(answer.bytes.toString('utf8')) as {
      type: string;
      content: Array<{ text: string }>;
      usage: Record<string, number>;
    };
    expect(message.type).toBe('message');
    expect(message.content[0].text).toBe('Hello from Bedrock, you said: hello invoke');
    const reported = emulator.reported.at(-1)!;
    expect(message.usage).toMatchObject({ input_tokens: reported.promptTokens, output_tokens: reported.completionTokens });
    expect((await send(target, body.replace('hello', 'HELLO'))).status).toBe(403);
    // the client's own body, unchanged (model and stream in it), is what InvokeModel refuses
    const raw = await send(await nativeSigned(call, MESSAGES), MESSAGES);
    expect(raw.status).toBe(400);
    expect(raw.bytes.toString('utf8')).toContain('extraneous key [model]');
  });

  it('streams chunk frames the re-framer turns into the SSE the passthrough watcher bills', async () => {
    const call = callOf(true);
    const body = native.encode(MESSAGES, {}, call);
    const target = await nativeSigned(call, body);
    const answer = await request(target.url, { method: target.method, headers: target.headers, body });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/vnd.amazon.eventstream');
    const reframer = native.reframe(call);
    const watcher = new MessagesUsageWatcher();
    for await (const piece of answer.body) watcher.pushBytes(Buffer.from(reframer.push(piece as Buffer)));
    watcher.pushBytes(Buffer.from(reframer.end()));
    watcher.flush();
    expect(watcher.streamedText()).toBe('Hello from Bedrock, you said: hello invoke');
    const reported = emulator.reported.at(-1)!;
    expect(watcher.reportedUsage()).toEqual({
      promptTokens: reported.promptTokens,
      completionTokens: reported.completionTokens,
      cachedPromptTokens: 0,
    });
  });
});

describe("the Bedrock emulator's Rerank, signature checked", () => {
  it('answers a signed rerank, and refuses it changed after signing', async () => {
    const call: AdaptorCall = {
      operation: 'rerank',
      model: 'amazon.rerank-v1:0',
      stream: false,
      responseId: '',
      now: Math.floor(Date.now() / 1000),
      channel: channel(),
    };
    const body = bedrockAdaptor.encodeRerank!(
      { model: call.model, query: 'red apples', documents: ['green pears', 'red apples and plums', 'apples'], extra: {} },
      call,
    );
    const target = await signed(channel(), call, body);
    const answer = await send(target, body);
    expect(answer.status).toBe(200);
    const decoded = bedrockAdaptor.decodeRerank!(answer.bytes.toString('utf8'), call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.results).toEqual([
      { index: 1, relevance_score: 1 },
      { index: 2, relevance_score: 0.5 },
      { index: 0, relevance_score: 0 },
    ]);
    expect(emulator.queries.at(-1)).toBe(1);
    expect((await send(target, body.replace('red apples', 'red grapes'))).status).toBe(403);
  });
});
