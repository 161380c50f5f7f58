// The Zhipu emulator driven by the Zhipu adaptor over real HTTP: both
// protocols, plain and streamed, embeddings, and the dead key, so the two are
// proven to agree.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zhipuAdaptor } from '../../../server/protocols/upstream/zhipu';
import { isUpstreamFailure, type AdaptorCall, type ChannelConfig, type ChatChunk, type ChatRequest } from '../../../server/protocols/types';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { startZhipuEmulator, ZHIPU_CHANNELS } from '../../support/emulators/zhipu';
import type { EmulatedChannel, ProtocolEmulator } from '../../support/emulators/types';

let emulator: ProtocolEmulator;
beforeAll(async () => {
  emulator = await startZhipuEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const channelFor = (row: EmulatedChannel, key = row.key): ChannelConfig => ({
  type: row.type,
  key,
  baseUrl: row.baseUrl(emulator),
  other: row.other,
});
const callOf = (operation: AdaptorCall['operation'], model: string, stream: boolean): AdaptorCall => ({
  operation,
  model,
  stream,
  responseId: 'chatcmpl-emulated',
  now: Math.floor(Date.now() / 1000),
});
const chat = (stream: boolean): ChatRequest => ({
  model: 'client-model',
  messages: [
    { role: 'system', content: 'Be kind.' },
    { role: 'user', content: 'Hi there, Zhipu' },
  ],
  stream,
  temperature: 0.3,
});

async function send(channel: ChannelConfig, call: AdaptorCall, body: string) {
  const target = zhipuAdaptor.target(channel, call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const response = await request(target.url, { method: target.method, headers: target.headers, body });
  return response;
}

async function chatPlain(channel: ChannelConfig, model: string) {
  // target and encode share the call, as the relay does
  const call = callOf('chat', model, false);
  zhipuAdaptor.target(channel, call);
  const answer = await send(channel, call, zhipuAdaptor.encodeChat(chat(false), call));
  const text = await answer.body.text();
  return answer.statusCode >= 300 ? zhipuAdaptor.failure(answer.statusCode, text) : zhipuAdaptor.decodeChat(text, call);
}

async function chatStream(channel: ChannelConfig, model: string) {
  const call = callOf('chat', model, true);
  zhipuAdaptor.target(channel, call);
  const response = await send(channel, call, zhipuAdaptor.encodeChat(chat(true), call));
  const decoder = zhipuAdaptor.decodeChatStream(call);
  const chunks: ChatChunk[] = [];
  for await (const piece of response.body) chunks.push(...decoder.push(piece as Buffer));
  chunks.push(...decoder.end());
  return { call, chunks, decoder, status: response.statusCode };
}

for (const row of ZHIPU_CHANNELS) {
  const label = row.other || 'v4';
  describe(`Zhipu emulator, ${label}`, () => {
    it('answers a plain chat the adaptor decodes, with the usage it reported', async () => {
      const before = emulator.reported.length;
      const decoded = await chatPlain(channelFor(row), row.chatModel);
      if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
      expect(decoded.choices[0].message.content).toBe('Hello from Zhipu, you said: Hi there, Zhipu');
      const reported = emulator.reported.slice(before);
      expect(reported).toEqual([{ promptTokens: 5, completionTokens: 8, cachedPromptTokens: 0 }]);
      expect(decoded.usage).toEqual({ prompt_tokens: 5, completion_tokens: 8, total_tokens: 13 });
      const last = emulator.requests.at(-1)!;
      if (row.other === 'v3') {
        expect(last.url).toBe(`/api/paas/v3/model-api/${row.chatModel}/invoke`);
        expect(last.body).toMatchObject({
          prompt: [
            { role: 'system', content: 'Be kind.' },
            { role: 'user', content: 'Hi there, Zhipu' },
          ],
          temperature: 0.3,
        });
      } else {
        expect(last.url).toBe('/api/paas/v4/chat/completions');
        expect(last.body).toMatchObject({ model: row.chatModel, temperature: 0.3 });
      }
    });

    it('streams word by word into valid chunks with the reported usage', async () => {
      const before = emulator.reported.length;
      const { call, chunks, decoder, status } = await chatStream(channelFor(row), row.chatModel);
      expect(status).toBe(200);
      expect(decoder.failure()).toBeUndefined();
      expect(decoder.done()).toBe(true);
      expect(chunks.length).toBeGreaterThan(6);
      expect(chunks.filter((chunk) => chunk.choices.some((choice) => choice.finish_reason))).toHaveLength(1);
      const whole = assembleChatResponse(chunks, call, decoder.usage()!);
      expect(whole.choices[0].message.content).toBe('Hello from Zhipu, you said: Hi there, Zhipu');
      expect(decoder.usage()).toEqual(emulator.reported.slice(before)[0]);
    });

    it("refuses the dead key with Zhipu's own words, read as a dead key", async () => {
      const dead = channelFor(row, row.deadKey);
      const plain = await chatPlain(dead, row.chatModel);
      expect(isUpstreamFailure(plain) && plain.deadKey).toBe(true);
      expect(isUpstreamFailure(plain) && plain.code).toEqual(row.other === 'v3' ? 1113 : '1113');
      // v3 answers a stream request with its JSON envelope in a 200, v4 with HTTP 429: either way a dead key
      const streamed = await chatStream(dead, row.chatModel);
      expect(streamed.status).toBe(row.other === 'v3' ? 200 : 429);
      expect(streamed.decoder.failure()).toMatchObject({ deadKey: true, retryable: true });
    });
  });
}

describe('Zhipu emulator checks', () => {
  it('answers embeddings in OpenAI shape with usage', async () => {
    const row = ZHIPU_CHANNELS[0];
    const call = callOf('embeddings', row.embeddingModel!, false);
    const response = await send(
      channelFor(row),
      call,
      zhipuAdaptor.encodeEmbeddings!({ model: 'x', input: ['one two', 'three'], dimensions: 4 }, call),
    );
    const decoded = zhipuAdaptor.decodeEmbeddings!(await response.body.text(), call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.data.map((item) => [item.index, item.embedding.length])).toEqual([
      [0, 4],
      [1, 4],
    ]);
    expect(decoded.model).toBe('embedding-3');
    expect(decoded.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 3, completionTokens: 0, cachedPromptTokens: 0 });
  });

  it('verifies the v3 JWT: a wrong secret or a stale token is refused', async () => {
    const row = ZHIPU_CHANNELS[1];
    const wrong = await chatPlain(channelFor(row, 'zhipu-good-id.not-the-secret'), row.chatModel);
    expect(isUpstreamFailure(wrong) && wrong.code).toBe(1004);
    const call = { ...callOf('chat', row.chatModel, false), now: Math.floor(Date.now() / 1000) - 7200 };
    zhipuAdaptor.target(channelFor(row), call);
    const response = await send(channelFor(row), call, zhipuAdaptor.encodeChat(chat(false), call));
    const stale = zhipuAdaptor.decodeChat(await response.body.text(), call);
    expect(isUpstreamFailure(stale) && stale.code).toBe(1003);
    expect(isUpstreamFailure(stale) && stale.deadKey).toBe(false);
  });
});
