// The Gemini emulator driven by the Gemini adaptor over real loopback HTTP:
// proves the two agree on the wire (requests the emulator accepts as strictly as
// Google, answers and streams the adaptor decodes, usage equal to what was reported).
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geminiAdaptor } from '../../../server/protocols/upstream/gemini';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type EmbeddingRequest,
} from '../../../server/protocols/types';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { GEMINI_BLOCKED_WORD, GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { ProtocolEmulator } from '../../support/emulators/types';

let emulator: ProtocolEmulator;
beforeAll(async () => {
  emulator = await startGeminiEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const callOf = (operation: AdaptorCall['operation'], model: string, stream: boolean): AdaptorCall => ({
  operation,
  model,
  stream,
  responseId: 'chatcmpl-emulator',
  now: 1_800_000_000,
});

const channelFor = (entry: (typeof GEMINI_CHANNELS)[number], key = entry.key): ChannelConfig => ({
  type: entry.type,
  key,
  baseUrl: entry.baseUrl(emulator),
  other: entry.other,
});

async function send(channel: ChannelConfig, call: AdaptorCall, body: string): Promise<{ status: number; text: string; pieces: Buffer[] }> {
  const target = geminiAdaptor.target(channel, call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const answer = await request(target.url, { method: target.method, headers: target.headers, body });
  const pieces: Buffer[] = [];
  for await (const piece of answer.body) pieces.push(piece as Buffer);
  return { status: answer.statusCode, text: Buffer.concat(pieces).toString('utf8'), pieces };
}

async function chat(channel: ChannelConfig, chatRequest: ChatRequest): Promise<ChatResponse> {
  const call = callOf('chat', chatRequest.model, false);
  const { status, text } = await send(channel, call, geminiAdaptor.encodeChat(chatRequest, call));
  if (status !== 200) throw new Error(geminiAdaptor.failure(status, text).message);
  const decoded = geminiAdaptor.decodeChat(text, call);
  if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
  return decoded;
}

async function chatStream(channel: ChannelConfig, chatRequest: ChatRequest) {
  const call = callOf('chat', chatRequest.model, true);
  const { status, pieces } = await send(channel, call, geminiAdaptor.encodeChat({ ...chatRequest, stream: true }, call));
  expect(status).toBe(200);
  const decoder = geminiAdaptor.decodeChatStream(call);
  const chunks: ChatChunk[] = [];
  for (const piece of pieces) chunks.push(...decoder.push(piece));
  chunks.push(...decoder.end());
  expect(decoder.failure()).toBeUndefined();
  return { chunks, usage: decoder.usage(), done: decoder.done(), pieces, call };
}

for (const entry of GEMINI_CHANNELS) {
  describe(`gemini emulator through the adaptor: channel type ${entry.type}`, () => {
    const channel = () => channelFor(entry);
    const question: ChatRequest = {
      model: entry.chatModel,
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
      temperature: 0.5,
      max_tokens: 50,
    };

    it('answers a plain chat with the reported usage, the system prompt sent as systemInstruction', async () => {
      const before = emulator.reported.length;
      const answer = await chat(channel(), question);
      expect(answer.choices[0].message.content).toBe('Hello from Gemini, you said: What is the capital of France?');
      expect(answer.choices[0].finish_reason).toBe('stop');
      expect(answer.model).toBe(entry.chatModel);
      expect(answer.id).toMatch(/^emu-gemini-\d+$/);
      const reported = emulator.reported[before];
      // prompt = 5 system words + 6 user words; answer = 11 words
      expect(reported).toEqual({ promptTokens: 11, completionTokens: 11, cachedPromptTokens: 0 });
      expect(answer.usage).toEqual({ prompt_tokens: 11, completion_tokens: 11, total_tokens: 22 });
      const sent = emulator.requests[emulator.requests.length - 1];
      expect(sent.url).toBe(`/v1beta/models/${entry.chatModel}:generateContent`);
      expect(sent.headers['x-goog-api-key']).toBe(entry.key);
      expect(sent.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }] },
        generationConfig: { temperature: 0.5, maxOutputTokens: 50 },
      });
    });

    it('streams word by word over SSE, one finish reason, usage as reported', async () => {
      const before = emulator.reported.length;
      const { chunks, usage, done, pieces, call } = await chatStream(channel(), question);
      expect(pieces.length).toBeGreaterThan(1);
      expect(chunks).toHaveLength(11);
      expect(chunks.map((chunk) => chunk.choices[0].finish_reason).filter(Boolean)).toEqual(['stop']);
      expect(done).toBe(true);
      expect(usage).toEqual(emulator.reported[before]);
      const whole = assembleChatResponse(chunks, call, usage!);
      expect(whole.choices[0].message.content).toBe('Hello from Gemini, you said: What is the capital of France?');
      expect(emulator.requests[emulator.requests.length - 1].url).toBe(`/v1beta/models/${entry.chatModel}:streamGenerateContent?alt=sse`);
    });

    it('n candidates come back as n choices, billed together', async () => {
      const answer = await chat(channel(), { ...question, n: 2 });
      expect(answer.choices.map((choice) => choice.index)).toEqual([0, 1]);
      expect(answer.choices[1].message.content).toBe(answer.choices[0].message.content);
      expect(answer.usage.completion_tokens).toBe(22);
      const { chunks } = await chatStream(channel(), { ...question, n: 2 });
      expect(new Set(chunks.map((chunk) => chunk.choices[0].index))).toEqual(new Set([0, 1]));
    });

    it('max_tokens cuts the answer with finish_reason length', async () => {
      const answer = await chat(channel(), { ...question, max_tokens: 3 });
      expect(answer.choices[0].message.content).toBe('Hello from Gemini,');
      expect(answer.choices[0].finish_reason).toBe('length');
    });

    it('round-trips a tool call: schema cleaned enough for Google, call decoded, answer sent back', async () => {
      const tools: ChatRequest['tools'] = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather in a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string', format: 'uri' } },
              required: ['city'],
              additionalProperties: false,
              $schema: 'http://json-schema.org/draft-07/schema#',
            },
          },
        },
        { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
      ];
      const first = await chat(channel(), {
        model: entry.chatModel,
        messages: [{ role: 'user', content: 'Oslo' }],
        tools,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      const toolCall = first.choices[0].message.tool_calls?.[0];
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(toolCall?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
      expect(toolCall?.id).toMatch(/^call_emu-gemini-\d+_0$/);
      const second = await chat(channel(), {
        model: entry.chatModel,
        messages: [
          { role: 'user', content: 'Oslo' },
          first.choices[0].message,
          { role: 'tool', tool_call_id: toolCall!.id, content: '{"sky":"clear"}' },
        ],
        tools,
      });
      expect(second.choices[0].message.content).toBe('Hello from Gemini, the tool said: {"sky":"clear"}');
      const streamed = await chatStream(channel(), {
        model: entry.chatModel,
        messages: [{ role: 'user', content: 'Oslo' }],
        tools,
        tool_choice: 'required',
      });
      const whole = assembleChatResponse(streamed.chunks, streamed.call, streamed.usage!);
      expect(whole.choices[0].message.tool_calls?.[0].function.name).toBe('get_weather');
      expect(whole.choices[0].finish_reason).toBe('tool_calls');
    });

    it('a blocked prompt comes back as content_filter, plain and streamed', async () => {
      const blocked: ChatRequest = {
        model: entry.chatModel,
        messages: [{ role: 'user', content: `Tell me about ${GEMINI_BLOCKED_WORD}` }],
      };
      const answer = await chat(channel(), blocked);
      expect(answer.choices[0].finish_reason).toBe('content_filter');
      expect(answer.usage.prompt_tokens).toBe(4);
      const { chunks, done } = await chatStream(channel(), blocked);
      expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['content_filter']);
      expect(done).toBe(true);
    });

    it('embeds with batchEmbedContents (Google reports no usage)', async () => {
      const call = callOf('embeddings', entry.embeddingModel!, false);
      const embeddingRequest: EmbeddingRequest = { model: entry.embeddingModel!, input: ['first text', 'second one here'], dimensions: 16 };
      const { status, text } = await send(channel(), call, geminiAdaptor.encodeEmbeddings!(embeddingRequest, call));
      expect(status).toBe(200);
      const decoded = geminiAdaptor.decodeEmbeddings!(text, call);
      if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
      expect(decoded.data.map((item) => [item.index, item.embedding.length])).toEqual([
        [0, 16],
        [1, 16],
      ]);
      expect(decoded.usage).toEqual({ prompt_tokens: emulator.reported[emulator.reported.length - 1].promptTokens, total_tokens: 0 });
    });

    it("refuses the dead key in Google's words, read as a dead key", async () => {
      const call = callOf('chat', entry.chatModel, false);
      const { status, text } = await send(channelFor(entry, entry.deadKey), call, geminiAdaptor.encodeChat(question, call));
      expect(status).toBe(400);
      const failure = geminiAdaptor.failure(status, text);
      expect(failure).toMatchObject({
        deadKey: true,
        retryable: true,
        code: 'API_KEY_INVALID',
        message: 'API key not valid. Please pass a valid API key.',
      });
    });
  });
}

describe('gemini emulator: as strict as Google where adaptors slip', () => {
  it('refuses schema keywords and unknown fields Google refuses', async () => {
    const [entry] = GEMINI_CHANNELS;
    const call = callOf('chat', entry.chatModel, false);
    const raw = JSON.stringify({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      tools: [
        {
          functionDeclarations: [
            { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } },
          ],
        },
      ],
    });
    const refused = await send(channelFor(entry), call, raw);
    expect(refused.status).toBe(400);
    const failure = geminiAdaptor.failure(refused.status, refused.text);
    expect(failure).toMatchObject({ deadKey: false, retryable: false, type: 'INVALID_ARGUMENT' });
    expect(failure.message).toMatch(/additionalProperties/);
    const system = await send(channelFor(entry), call, JSON.stringify({ contents: [{ role: 'system', parts: [{ text: 'hi' }] }] }));
    expect(system.status).toBe(400);
  });
});
