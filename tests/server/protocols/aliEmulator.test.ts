// The DashScope emulator and the Ali adaptor agree, over real loopback HTTP:
// chat whole and streamed, embeddings, and DashScope's refusals.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliAdaptor } from '../../../server/protocols/upstream/ali';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { isUpstreamFailure, type AdaptorCall, type ChannelConfig, type ChatChunk, type ChatRequest } from '../../../server/protocols/types';
import { ALI_CHANNELS, startAliEmulator } from '../../support/emulators/ali';
import type { ProtocolEmulator } from '../../support/emulators/types';

let emulator: ProtocolEmulator;
const [channelSpec] = ALI_CHANNELS;

beforeAll(async () => {
  emulator = await startAliEmulator();
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
const callOf = (stream: boolean, operation: AdaptorCall['operation'] = 'chat', model = channelSpec.chatModel): AdaptorCall => ({
  operation,
  model,
  stream,
  responseId: 'chatcmpl-emulated',
  now: 1_700_000_000,
});

async function send(key: string, call: AdaptorCall, body: string): Promise<{ status: number; text: string; pieces: Buffer[] }> {
  const target = aliAdaptor.target(channelOf(key), call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const response = await request(target.url, { method: target.method, headers: target.headers, body });
  const pieces: Buffer[] = [];
  for await (const piece of response.body) pieces.push(piece as Buffer);
  return { status: response.statusCode, text: Buffer.concat(pieces).toString('utf8'), pieces };
}

const chatRequest: ChatRequest = {
  model: channelSpec.chatModel,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Name three primary colours please' },
  ],
  top_k: 20,
};

describe('Ali emulator with the Ali adaptor', () => {
  it('answers a whole chat with exact usage', async () => {
    const call = callOf(false);
    const { status, text } = await send(channelSpec.key, call, aliAdaptor.encodeChat(chatRequest, call));
    expect(status).toBe(200);
    const decoded = aliAdaptor.decodeChat(text, call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].message.content).toBe('Hello from DashScope, you said: Name three primary colours please');
    expect(decoded.choices[0].finish_reason).toBe('stop');
    expect(decoded.model).toBe('qwen-plus');
    // prompt = 3 + 5 words; the answer has 10
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 8, completionTokens: 10, cachedPromptTokens: 0 });
    expect(decoded.usage).toEqual({ prompt_tokens: 8, completion_tokens: 10, total_tokens: 18 });
    expect(emulator.requests.at(-1)!.body).toMatchObject({
      model: 'qwen-plus',
      input: { messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user' }] },
      parameters: { result_format: 'message', top_k: 20 },
    });
  });

  it('streams word by word, incrementally, and the chunks assemble to the same answer and usage', async () => {
    const call = callOf(true);
    const { status, pieces } = await send(channelSpec.key, call, aliAdaptor.encodeChat({ ...chatRequest, stream: true }, call));
    expect(status).toBe(200);
    expect(emulator.requests.at(-1)!.headers['x-dashscope-sse']).toBe('enable');
    const decoder = aliAdaptor.decodeChatStream(call);
    const chunks: ChatChunk[] = [];
    for (const piece of pieces) chunks.push(...decoder.push(piece));
    chunks.push(...decoder.end());
    expect(decoder.failure()).toBeUndefined();
    expect(decoder.done()).toBe(true);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((chunk) => chunk.model === 'qwen-plus')).toBe(true);
    expect(chunks.filter((chunk) => chunk.choices.some((choice) => choice.finish_reason !== null))).toHaveLength(1);
    const usage = decoder.usage()!;
    expect(usage).toEqual(emulator.reported.at(-1));
    const whole = assembleChatResponse(chunks, call, usage);
    expect(whole.choices[0].message.content).toBe('Hello from DashScope, you said: Name three primary colours please');
    expect(whole.id).toMatch(/^emulated-/);
  });

  it('answers embeddings in OpenAI shape with the reported usage', async () => {
    const call = callOf(false, 'embeddings', channelSpec.embeddingModel);
    const { text } = await send(
      channelSpec.key,
      call,
      aliAdaptor.encodeEmbeddings!({ model: channelSpec.embeddingModel!, input: ['one two', 'three'], dimensions: 16 }, call),
    );
    const decoded = aliAdaptor.decodeEmbeddings!(text, call);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.data.map((item) => item.index)).toEqual([0, 1]);
    expect(decoded.data[0].embedding).toHaveLength(16);
    expect(decoded.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 3, completionTokens: 0, cachedPromptTokens: 0 });
  });

  it('refuses the dead key as DashScope does, and the adaptor reads a dead key', async () => {
    for (const stream of [false, true]) {
      const call = callOf(stream);
      const { status, text } = await send(channelSpec.deadKey, call, aliAdaptor.encodeChat(chatRequest, call));
      expect(status).toBe(401);
      const failure = aliAdaptor.failure(status, text);
      expect(failure).toMatchObject({ deadKey: true, retryable: true, code: 'InvalidApiKey', message: 'Invalid API-key provided.' });
    }
  });

  it('an unknown model comes back as a surfaced request error', async () => {
    const call = callOf(false, 'chat', 'qwen-imaginary');
    const { status, text } = await send(channelSpec.key, call, aliAdaptor.encodeChat({ ...chatRequest, model: 'qwen-imaginary' }, call));
    expect(status).toBe(400);
    expect(aliAdaptor.failure(status, text)).toMatchObject({ status: 400, deadKey: false, retryable: false, message: 'Model not exist.' });
  });

  it('calls the offered tool (whole and streamed) and answers the tool result', async () => {
    const tools: ChatRequest['tools'] = [
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Look a thing up',
          parameters: { type: 'object', properties: { text: { type: 'string' } } },
        },
      },
    ];
    const asking: ChatRequest = { model: channelSpec.chatModel, messages: [{ role: 'user', content: 'find the moon' }], tools };
    const whole = callOf(false);
    const decoded = aliAdaptor.decodeChat((await send(channelSpec.key, whole, aliAdaptor.encodeChat(asking, whole))).text, whole);
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].finish_reason).toBe('tool_calls');
    const [toolCall] = decoded.choices[0].message.tool_calls!;
    expect(toolCall.function).toEqual({ name: 'lookup', arguments: '{"text":"find the moon"}' });
    expect(decoded.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 }); // '{"text":"find', 'the', 'moon"}'

    const streamed = callOf(true);
    const { pieces } = await send(channelSpec.key, streamed, aliAdaptor.encodeChat({ ...asking, stream: true }, streamed));
    const decoder = aliAdaptor.decodeChatStream(streamed);
    const chunks = pieces.flatMap((piece) => decoder.push(piece));
    chunks.push(...decoder.end());
    const assembled = assembleChatResponse(chunks, streamed, decoder.usage()!);
    expect(assembled.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: toolCall.function },
    ]);
    expect(assembled.choices[0].finish_reason).toBe('tool_calls');

    const answering: ChatRequest = {
      ...asking,
      messages: [
        ...asking.messages,
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: toolCall.id, content: 'it is far' },
      ],
    };
    const after = aliAdaptor.decodeChat((await send(channelSpec.key, whole, aliAdaptor.encodeChat(answering, whole))).text, whole);
    if (isUpstreamFailure(after)) throw new Error(after.message);
    expect(after.choices[0].message.content).toBe('Hello from DashScope, the tool said: it is far');
    expect(emulator.requests.at(-1)!.body).toMatchObject({
      input: {
        messages: [
          { role: 'user' },
          { role: 'assistant', tool_calls: [{ id: toolCall.id }] },
          { role: 'tool', tool_call_id: toolCall.id, content: 'it is far' },
        ],
      },
    });
  });
});
