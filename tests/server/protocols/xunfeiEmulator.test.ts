// The Spark emulator driven by the Spark adaptor over a real WebSocket: the
// signed URL accepted, frames decoded into a stream and into one answer, the
// dead key's error frame, and the handshake refusals read by failure().
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xunfeiAdaptor } from '../../../server/protocols/upstream/xunfei';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type UpstreamFailure,
} from '../../../server/protocols/types';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { startXunfeiEmulator, XUNFEI_CHANNELS } from '../../support/emulators/xunfei';
import type { ProtocolEmulator } from '../../support/emulators/types';

let emulator: ProtocolEmulator;
beforeAll(async () => {
  emulator = await startXunfeiEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const row = XUNFEI_CHANNELS[0];
const channelFor = (key = row.key, other = row.other): ChannelConfig => ({ type: row.type, key, baseUrl: row.baseUrl(emulator), other });
const callOf = (stream: boolean, now = Math.floor(Date.now() / 1000)): AdaptorCall => ({
  operation: 'chat',
  model: row.chatModel,
  stream,
  responseId: 'chatcmpl-emulated',
  now,
});
const chat: ChatRequest = {
  model: 'client-model',
  messages: [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'Hi there, Spark' },
  ],
  temperature: 0.5,
  top_k: 4,
  n: 2,
};

interface Exchange {
  frames: string[];
  refusal?: { status: number; body: string };
}

/** One call as the relay makes it: target, connect, send the one frame, read frames until the socket closes. */
async function exchange(channel: ChannelConfig, bare: AdaptorCall): Promise<Exchange> {
  const call = { ...bare, channel };
  const target = xunfeiAdaptor.target(channel, call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const frame = xunfeiAdaptor.encodeChat(chat, call);
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(target.url);
    const frames: string[] = [];
    socket.on('open', () => socket.send(frame));
    socket.on('message', (data) => frames.push((data as Buffer).toString())); // ws's default binaryType, nodebuffer
    socket.on('close', () => resolve({ frames }));
    socket.on('unexpected-response', (_request, response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () =>
        resolve({ frames, refusal: { status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') } }),
      );
    });
    socket.on('error', reject);
  });
}

describe('Spark emulator', () => {
  it('accepts the signed URL and streams word by word; the decoder makes valid chunks with the reported usage', async () => {
    const before = emulator.reported.length;
    const call = callOf(true);
    const { frames, refusal } = await exchange(channelFor(), call);
    expect(refusal).toBeUndefined();
    expect(frames.length).toBe(8);
    const decoder = xunfeiAdaptor.decodeChatStream(call);
    const chunks: ChatChunk[] = [];
    for (const frame of frames) chunks.push(...decoder.push(frame));
    chunks.push(...decoder.end());
    expect(decoder.failure()).toBeUndefined();
    expect(decoder.done()).toBe(true);
    expect(chunks).toHaveLength(8);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-cht000/);
    expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual([null, null, null, null, null, null, null, 'stop']);
    expect(decoder.usage()).toEqual(emulator.reported.slice(before)[0]);
    expect(decoder.usage()).toEqual({ promptTokens: 5, completionTokens: 8, cachedPromptTokens: 0 });
    const whole = assembleChatResponse(chunks, call, decoder.usage()!);
    expect(whole.choices[0].message.content).toBe('Hello from Spark, you said: Hi there, Spark');

    const sent = emulator.requests.at(-1)!;
    expect(sent.url.startsWith('/v3.5/chat?authorization=')).toBe(true);
    expect(sent.body).toEqual({
      header: { app_id: 'sb0a1b2c' },
      parameter: { chat: { domain: 'generalv3.5', temperature: 0.5, top_k: 4 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: 'Hi there, Spark' },
          ],
        },
      },
    });
  });

  it('answers a non-streamed call from the collected frames', async () => {
    const call = callOf(false);
    const { frames } = await exchange(channelFor(), call);
    const decoded = xunfeiAdaptor.decodeChat(frames.join('\n'), call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.id).toMatch(/^chatcmpl-cht000/);
    expect(decoded.model).toBe('generalv3.5');
    expect(decoded.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Hello from Spark, you said: Hi there, Spark' }, finish_reason: 'stop' },
    ]);
    expect(decoded.usage).toEqual({ prompt_tokens: 5, completion_tokens: 8, total_tokens: 13 });
  });

  it('serves every version at its own path with its own domain', async () => {
    for (const version of ['v1.1', 'v3.1', 'v4.0', 'pro-128k', 'max-32k']) {
      const call = callOf(true);
      const { frames, refusal } = await exchange(channelFor(row.key, version), call);
      expect(refusal, version).toBeUndefined();
      const decoder = xunfeiAdaptor.decodeChatStream(call);
      for (const frame of frames) decoder.push(frame);
      expect(decoder.failure(), version).toBeUndefined();
      expect(decoder.done(), version).toBe(true);
    }
  });

  it("gives the dead key Spark's 11200 frame, surfaced as a dead key", async () => {
    const call = callOf(true);
    const { frames } = await exchange(channelFor(row.deadKey), call);
    const decoder = xunfeiAdaptor.decodeChatStream(call);
    for (const frame of frames) decoder.push(frame);
    expect(decoder.failure()).toMatchObject({ code: 11200, deadKey: true, retryable: true });
    const whole = xunfeiAdaptor.decodeChat(frames.join('\n'), callOf(false));
    expect(isUpstreamFailure(whole) && whole.deadKey).toBe(true);
  });

  it('refuses a bad signature with 401 and a stale date with 403 during the handshake', async () => {
    const [appId, , apiKey] = row.key.split('|');
    const wrong = await exchange(channelFor(`${appId}|d3Jvbmctc2VjcmV0|${apiKey}`), callOf(true));
    expect(wrong.refusal?.status).toBe(401);
    const badSignature: UpstreamFailure = xunfeiAdaptor.failure(wrong.refusal!.status, wrong.refusal!.body);
    expect(badSignature).toMatchObject({ deadKey: true, message: 'HMAC signature cannot be verified' });

    const stale = await exchange(channelFor(), callOf(true, Math.floor(Date.now() / 1000) - 600));
    expect(stale.refusal?.status).toBe(403);
    expect(xunfeiAdaptor.failure(stale.refusal!.status, stale.refusal!.body)).toMatchObject({ deadKey: false, retryable: true });
  });
});
