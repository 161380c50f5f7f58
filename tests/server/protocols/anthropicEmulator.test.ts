// The Anthropic emulator driven over real HTTP by the Anthropic adaptor: the
// two agree on the wire (request checks, whole answers, the event stream,
// errors) and the usage decoded is exactly the usage the emulator reported.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicAdaptor } from '../../../server/protocols/upstream/anthropic';
import { assembleChatResponse } from '../../../server/protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type UpstreamFailure,
  type Usage,
} from '../../../server/protocols/types';
import { catalogMaxOutputTokens } from '../../../server/billing/catalog';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';

const [CHANNEL] = ANTHROPIC_CHANNELS;
let emulator: AnthropicEmulator;

beforeAll(async () => {
  emulator = await startAnthropicEmulator();
});
afterAll(async () => {
  await emulator.close();
});

function channel(key = CHANNEL.key): ChannelConfig {
  return { type: CHANNEL.type, key, baseUrl: CHANNEL.baseUrl(emulator), other: CHANNEL.other };
}

/** As the relay calls it: with the catalog's maximum output for the model. */
function callOf(stream: boolean): AdaptorCall {
  return {
    operation: 'chat',
    model: CHANNEL.chatModel,
    stream,
    responseId: 'chatcmpl-emulator',
    now: 1_700_000_000,
    modelMaxOutputTokens: catalogMaxOutputTokens(CHANNEL.chatModel),
  };
}

async function send(chat: ChatRequest, stream: boolean, key?: string): Promise<{ status: number; text: string; call: AdaptorCall }> {
  const call = callOf(stream);
  const target = anthropicAdaptor.target(channel(key), call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const answer = await request(target.url, {
    method: target.method,
    headers: target.headers,
    body: anthropicAdaptor.encodeChat(chat, call),
  });
  return { status: answer.statusCode, text: await answer.body.text(), call };
}

async function whole(chat: ChatRequest, key?: string): Promise<ChatResponse | UpstreamFailure> {
  const { status, text, call } = await send(chat, false, key);
  return status >= 200 && status < 300 ? anthropicAdaptor.decodeChat(text, call) : anthropicAdaptor.failure(status, text);
}

async function streamed(
  chat: ChatRequest,
): Promise<{ wire: string; chunks: ChatChunk[]; usage: Usage | undefined; failure: UpstreamFailure | undefined; done: boolean }> {
  const call = callOf(true);
  const target = anthropicAdaptor.target(channel(), call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const answer = await request(target.url, {
    method: target.method,
    headers: target.headers,
    body: anthropicAdaptor.encodeChat({ ...chat, stream: true }, call),
  });
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
  const decoder = anthropicAdaptor.decodeChatStream(call);
  const chunks: ChatChunk[] = [];
  const pieces: Buffer[] = [];
  for await (const piece of answer.body) {
    pieces.push(piece as Buffer);
    chunks.push(...decoder.push(piece as Buffer));
  }
  chunks.push(...decoder.end());
  return { wire: Buffer.concat(pieces).toString('utf8'), chunks, usage: decoder.usage(), failure: decoder.failure(), done: decoder.done() };
}

const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: CHANNEL.chatModel,
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: text },
  ],
  ...extra,
});

const WEATHER: ChatRequest['tools'] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    },
  },
];

describe('Anthropic emulator and adaptor over HTTP', () => {
  it('a plain chat: the system prompt in `system`, the answer and the usage the emulator reported', async () => {
    const answer = await whole(ask('hi there'));
    if (isUpstreamFailure(answer)) throw new Error(answer.message);
    expect(answer.choices[0].message.content).toBe('Hello from Anthropic, you said: hi there');
    expect(answer.choices[0].finish_reason).toBe('stop');
    expect(answer.id).toMatch(/^msg_emu/);
    expect(answer.model).toBe(CHANNEL.chatModel);
    const sent = emulator.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(CHANNEL.key);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    // no limit asked: the model's maximum output, 8192 for claude-3-5-haiku in the catalog
    expect(sent.body).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: 'hi there' }], max_tokens: 8192 });
    // prompt: "Be brief." + "hi there" = 4 words; answer: 7 words
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 4, completionTokens: 7, cachedPromptTokens: 0, cacheCreationTokens: 0 });
    expect(answer.usage).toEqual({ prompt_tokens: 4, completion_tokens: 7, total_tokens: 11 });
  });

  it('a stream: the exact event sequence, word by word, decoded to chunks with the reported usage', async () => {
    const { wire, chunks, usage, failure, done } = await streamed(ask('stream me a reply'));
    expect(failure).toBeUndefined();
    expect(done).toBe(true);
    const events = [...wire.matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      ...Array(9).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.filter((chunk) => chunk.choices.some((choice) => choice.finish_reason)).length).toBe(1);
    for (const chunk of chunks) for (const choice of chunk.choices) expect(choice.finish_reason).not.toBe('');
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([chunks[0].id]));
    expect(chunks[0].id).toMatch(/^msg_emu/);
    const assembled = assembleChatResponse(chunks, callOf(true), usage!);
    expect(assembled.choices[0].message.content).toBe('Hello from Anthropic, you said: stream me a reply');
    const reported = emulator.reported.at(-1)!;
    expect(usage).toEqual({
      promptTokens: reported.promptTokens,
      completionTokens: reported.completionTokens,
      cachedPromptTokens: 0,
      cacheCreationTokens: 0,
    });
    expect(reported).toEqual({ promptTokens: 6, completionTokens: 9, cachedPromptTokens: 0, cacheCreationTokens: 0 });
  });

  it('cache reads and writes asked for by marker are reported apart and billed inside the prompt', async () => {
    const answer = await whole(ask('remember [cache_read:3] and [cache_creation:2] this'));
    if (isUpstreamFailure(answer)) throw new Error(answer.message);
    // prompt words: Be brief. remember [cache_read:3] and [cache_creation:2] this = 7
    expect(emulator.reported.at(-1)).toEqual({ promptTokens: 7, completionTokens: 10, cachedPromptTokens: 3, cacheCreationTokens: 2 });
    expect(answer.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: 10,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 2 },
    });
    const { usage } = await streamed(ask('again [cache_read:4]'));
    expect(usage).toEqual({ promptTokens: 4, completionTokens: 7, cachedPromptTokens: 4, cacheCreationTokens: 0 });
    expect(emulator.reported.at(-1)).toMatchObject({ promptTokens: 4, cachedPromptTokens: 4 });
  });

  it('a tool round trip: tool_use comes back as tool_calls, the result goes back as tool_result', async () => {
    const first = await whole(ask('please use get_weather for Paris', { tools: WEATHER }));
    if (isUpstreamFailure(first)) throw new Error(first.message);
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.content).toBeNull();
    const [toolCall] = first.choices[0].message.tool_calls!;
    expect(toolCall.id).toMatch(/^toolu_emu/);
    expect(toolCall.function.name).toBe('get_weather');
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ location: 'please use get_weather for Paris' });

    const second = await whole({
      model: CHANNEL.chatModel,
      tools: WEATHER,
      messages: [
        { role: 'user', content: 'please use get_weather for Paris' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: toolCall.id, content: 'Sunny, 21 C' },
      ],
    });
    if (isUpstreamFailure(second)) throw new Error(second.message);
    expect(second.choices[0].message.content).toBe('Hello from Anthropic, the tool said: Sunny, 21 C');
    expect(second.choices[0].finish_reason).toBe('stop');
    expect((emulator.requests.at(-1)!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'please use get_weather for Paris' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: toolCall.id, name: 'get_weather', input: { location: 'please use get_weather for Paris' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolCall.id, content: 'Sunny, 21 C' }] },
    ]);
  });

  it('a streamed tool call: id and name first, then argument fragments that join to the input', async () => {
    const { chunks, usage, done } = await streamed(ask('what does get_weather say', { tools: WEATHER, tool_choice: 'required' }));
    expect(done).toBe(true);
    const assembled = assembleChatResponse(chunks, callOf(true), usage!);
    expect(assembled.choices[0].finish_reason).toBe('tool_calls');
    const calls = assembled.choices[0].message.tool_calls!;
    expect(calls).toHaveLength(1);
    expect(calls[0].id).toMatch(/^toolu_emu/);
    expect(JSON.parse(calls[0].function.arguments)).toEqual({ location: 'what does get_weather say' });
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(fragments.length).toBeGreaterThan(2);
    expect(fragments[0]).toMatchObject({ index: 0, id: calls[0].id, function: { name: 'get_weather' } });
    expect(fragments.slice(1).every((fragment) => fragment.index === 0 && fragment.id === undefined)).toBe(true);
    expect((emulator.requests.at(-1)!.body as { tool_choice: unknown }).tool_choice).toEqual({ type: 'any' });
    expect(usage).toEqual({ ...emulator.reported.at(-1)!, cachedPromptTokens: 0, cacheCreationTokens: 0 });
  });

  it('max_tokens cuts the answer (length); a stop sequence cuts before it (stop)', async () => {
    const cut = await whole(ask('a long answer please', { max_tokens: 3 }));
    if (isUpstreamFailure(cut)) throw new Error(cut.message);
    expect(cut.choices[0].message.content).toBe('Hello from Anthropic,');
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(cut.usage.completion_tokens).toBe(3);
    const stopped = await whole(ask('stop at the word banana now', { stop: 'banana' }));
    if (isUpstreamFailure(stopped)) throw new Error(stopped.message);
    expect(stopped.choices[0].message.content).toBe('Hello from Anthropic, you said: stop at the word');
    expect(stopped.choices[0].finish_reason).toBe('stop');
    expect((emulator.requests.at(-1)!.body as { stop_sequences: string[] }).stop_sequences).toEqual(['banana']);
  });

  it('images go as image blocks the emulator accepts', async () => {
    const answer = await whole({
      model: CHANNEL.chatModel,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in these' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    if (isUpstreamFailure(answer)) throw new Error(answer.message);
    expect(answer.choices[0].message.content).toBe('Hello from Anthropic, you said: what is in these');
    expect((emulator.requests.at(-1)!.body as { messages: Array<{ content: unknown }> }).messages[0].content).toEqual([
      { type: 'text', text: 'what is in these' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('an error event inside a stream is surfaced as a failure, not swallowed', async () => {
    const before = emulator.reported.length;
    const { chunks, usage, failure, done } = await streamed(ask('break [stream_error] please'));
    expect(failure).toMatchObject({ status: 529, type: 'overloaded_error', deadKey: false, retryable: true });
    expect(done).toBe(false);
    expect(usage).toBeUndefined();
    expect(chunks.some((chunk) => chunk.choices.some((choice) => choice.finish_reason))).toBe(false);
    expect(emulator.reported.length).toBe(before);
  });

  it("the dead key gets Anthropic's authentication_error, read as a dead key", async () => {
    const failure = await whole(ask('hello'), CHANNEL.deadKey);
    expect(isUpstreamFailure(failure)).toBe(true);
    expect(failure).toMatchObject({ status: 401, type: 'authentication_error', deadKey: true, retryable: true });
  });

  it('an out-of-credit account is a dead key; an overloaded API is retryable; a bad request is neither', async () => {
    expect(await whole(ask('hello'), 'sk-ant-broke')).toMatchObject({ status: 400, deadKey: true, retryable: true });
    expect(await whole(ask('hello'), 'sk-ant-busy')).toMatchObject({
      status: 529,
      type: 'overloaded_error',
      deadKey: false,
      retryable: true,
    });
    // two user turns in a row are merged by the adaptor; an assistant turn first is the emulator's (and the API's) 400
    const refused = await whole({ model: CHANNEL.chatModel, messages: [{ role: 'assistant', content: 'I start' }] });
    expect(refused).toMatchObject({ status: 400, type: 'invalid_request_error', deadKey: false, retryable: false });
    expect((refused as UpstreamFailure).message).toContain('first message must use the "user" role');
  });

  it('for the benchmark: records nothing when asked, and paces streamed words by wordDelayMs', async () => {
    const quiet = await startAnthropicEmulator({ record: false, wordDelayMs: 25 });
    try {
      const call = callOf(true);
      const target = anthropicAdaptor.target({ ...channel(), baseUrl: quiet.baseUrl }, call);
      if (isUpstreamFailure(target)) throw new Error(target.message);
      const began = performance.now();
      const answer = await request(target.url, {
        method: 'POST',
        headers: target.headers,
        body: anthropicAdaptor.encodeChat({ ...ask('one two three four'), stream: true }, call),
      });
      const decoder = anthropicAdaptor.decodeChatStream(call);
      for await (const piece of answer.body) decoder.push(piece as Buffer);
      decoder.end();
      // 9 words, 25 ms before each
      expect(performance.now() - began).toBeGreaterThanOrEqual(200);
      expect(decoder.usage()).toMatchObject({ completionTokens: 9 });
      expect(quiet.requests).toEqual([]);
      expect(quiet.reported).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});
