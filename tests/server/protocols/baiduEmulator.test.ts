// The Baidu emulator and the Baidu adaptor agree, over real loopback HTTP:
// the token exchange as the adaptor describes it, chat whole and streamed,
// embeddings, and the vendor's refusals.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baiduAdaptor, CREDENTIAL_REJECTED } from '../../../server/protocols/upstream/baidu';
import { assembleChatResponse } from '../../../server/protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type HttpTarget,
} from '../../../server/protocols/types';
import { BAIDU_CHANNELS, startBaiduEmulator, type BaiduEmulator } from '../../support/emulators/baidu';

let emulator: BaiduEmulator;
const [channelSpec] = BAIDU_CHANNELS;

beforeAll(async () => {
  emulator = await startBaiduEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const channelOf = (key: string): ChannelConfig => ({
  type: channelSpec.type,
  key,
  baseUrl: channelSpec.baseUrl(emulator),
  other: channelSpec.other,
});

async function send(target: HttpTarget & { body?: string }, body?: string): Promise<{ status: number; text: string; pieces: Buffer[] }> {
  const response = await request(target.url, { method: target.method, headers: target.headers, body: body ?? target.body });
  const pieces: Buffer[] = [];
  for await (const piece of response.body) pieces.push(piece as Buffer);
  return { status: response.statusCode, text: Buffer.concat(pieces).toString('utf8'), pieces };
}

async function exchange(key: string) {
  const exchangeTarget = await baiduAdaptor.credential!.request(channelOf(key));
  if (isUpstreamFailure(exchangeTarget)) throw new Error(exchangeTarget.message);
  const { status, text } = await send(exchangeTarget);
  return baiduAdaptor.credential!.parse(status, text);
}

async function token(): Promise<string> {
  const exchanged = await exchange(channelSpec.key);
  if (isUpstreamFailure(exchanged)) throw new Error(exchanged.message);
  expect(exchanged.expiresInSeconds).toBe(2592000);
  return exchanged.credential;
}

const callOf = (
  credential: string,
  stream: boolean,
  operation: AdaptorCall['operation'] = 'chat',
  model = channelSpec.chatModel,
): AdaptorCall => ({
  operation,
  model,
  stream,
  responseId: 'chatcmpl-emulated',
  now: 1_700_000_000,
  credential,
});

const chatRequest: ChatRequest = {
  model: channelSpec.chatModel,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.5,
};

describe('Baidu emulator with the Baidu adaptor', () => {
  it('exchanges the good key for a token and answers a whole chat with exact usage', async () => {
    const call = callOf(await token(), false);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const before = emulator.reported.length;
    const { status, text } = await send(target, baiduAdaptor.encodeChat(chatRequest, call));
    expect(status).toBe(200);
    const decoded = baiduAdaptor.decodeChat(text, call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].message.content).toBe('Hello from Baidu, you said: What is the capital of France?');
    expect(decoded.choices[0].finish_reason).toBe('stop');
    expect(decoded.model).toBe('ERNIE-3.5-8K');
    expect(decoded.id).toMatch(/^as-/);
    const reported = emulator.reported[before];
    // prompt = 3 words of system + 6 of the question; the answer has 11 words
    expect(reported).toEqual({ promptTokens: 9, completionTokens: 11, cachedPromptTokens: 0 });
    expect(decoded.usage).toEqual({ prompt_tokens: 9, completion_tokens: 11, total_tokens: 20 });
    const sent = emulator.requests.at(-1)!;
    expect(new URL(sent.url, 'http://x').pathname).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions');
    expect(sent.body).toMatchObject({
      system: 'You are terse.',
      temperature: 0.5,
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
  });

  it('streams word by word and the decoded chunks assemble to the same answer and usage', async () => {
    const call = callOf(await token(), true);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const { status, pieces } = await send(target, baiduAdaptor.encodeChat({ ...chatRequest, stream: true }, call));
    expect(status).toBe(200);
    const decoder = baiduAdaptor.decodeChatStream(call);
    const chunks: ChatChunk[] = [];
    for (const piece of pieces) chunks.push(...decoder.push(piece));
    chunks.push(...decoder.end());
    expect(decoder.failure()).toBeUndefined();
    expect(decoder.done()).toBe(true);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((chunk) => chunk.model === 'ERNIE-3.5-8K')).toBe(true);
    expect(chunks.filter((chunk) => chunk.choices[0].finish_reason !== null)).toHaveLength(1);
    const usage = decoder.usage()!;
    expect(usage).toEqual(emulator.reported.at(-1));
    const whole = assembleChatResponse(chunks, call, usage);
    expect(whole.choices[0].message.content).toBe('Hello from Baidu, you said: What is the capital of France?');
  });

  it('answers embeddings in OpenAI shape with the reported usage', async () => {
    const call = callOf(await token(), false, 'embeddings', channelSpec.embeddingModel);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const { text } = await send(
      target,
      baiduAdaptor.encodeEmbeddings!({ model: channelSpec.embeddingModel!, input: ['one two', 'three'] }, call),
    );
    const decoded = baiduAdaptor.decodeEmbeddings!(text, call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.data.map((item) => item.index)).toEqual([0, 1]);
    expect(decoded.data[0].embedding).toHaveLength(8);
    expect(decoded.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 3, completionTokens: 0, cachedPromptTokens: 0 });
  });

  it("refuses the dead key's exchange, and the adaptor reads it as a dead key", async () => {
    const exchanged = await exchange(channelSpec.deadKey);
    expect(isUpstreamFailure(exchanged)).toBe(true);
    if (!isUpstreamFailure(exchanged)) return;
    expect(exchanged.deadKey).toBe(true);
    expect(exchanged.code).toBe('invalid_client');
  });

  it('refuses a token it never issued, and the adaptor asks for a new exchange', async () => {
    const call = callOf('24.forged', false);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const { text } = await send(target, baiduAdaptor.encodeChat(chatRequest, call));
    const decoded = baiduAdaptor.decodeChat(text, call);
    expect(isUpstreamFailure(decoded) && decoded.code).toBe(CREDENTIAL_REJECTED);
  });

  it('a malformed turn order comes back as a surfaced request error', async () => {
    const call = callOf(await token(), false);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const { text } = await send(
      target,
      baiduAdaptor.encodeChat({ ...chatRequest, messages: [{ role: 'assistant', content: 'Hi.' }] }, call),
    );
    const decoded = baiduAdaptor.decodeChat(text, call);
    expect(isUpstreamFailure(decoded)).toBe(true);
    if (!isUpstreamFailure(decoded)) return;
    expect(decoded).toMatchObject({ status: 400, retryable: false, deadKey: false });
    expect(decoded.message).toMatch(/role/);
  });

  it('an expired token is refused with 111; the adaptor asks for a re-exchange, and a fresh token works', async () => {
    const stale = await token();
    emulator.expireTokens();
    const call = callOf(stale, false);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const refused = baiduAdaptor.decodeChat((await send(target, baiduAdaptor.encodeChat(chatRequest, call))).text, call);
    expect(isUpstreamFailure(refused) && refused).toMatchObject({
      code: CREDENTIAL_REJECTED,
      deadKey: false,
      retryable: true,
      message: 'Access token expired',
    });
    const exchangesBefore = emulator.exchanges();
    const fresh = callOf(await token(), false);
    expect(emulator.exchanges()).toBe(exchangesBefore + 1);
    const retarget = baiduAdaptor.target(channelOf(channelSpec.key), fresh);
    if (isUpstreamFailure(retarget)) throw new Error(retarget.message);
    const answered = baiduAdaptor.decodeChat((await send(retarget, baiduAdaptor.encodeChat(chatRequest, fresh))).text, fresh);
    expect(isUpstreamFailure(answered)).toBe(false);
  });

  it('a streamed call with a token it never issued is refused in a plain JSON body that the stream decoder surfaces', async () => {
    const call = callOf('24.forged', true);
    const target = baiduAdaptor.target(channelOf(channelSpec.key), call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const { pieces } = await send(target, baiduAdaptor.encodeChat({ ...chatRequest, stream: true }, call));
    const decoder = baiduAdaptor.decodeChatStream(call);
    const chunks = pieces.flatMap((piece) => decoder.push(piece));
    chunks.push(...decoder.end());
    expect(chunks).toEqual([]);
    expect(decoder.failure()).toMatchObject({ code: CREDENTIAL_REJECTED, retryable: true, deadKey: false });
  });
});
