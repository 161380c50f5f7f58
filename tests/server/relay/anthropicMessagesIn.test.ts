// Anthropic Messages in (POST /v1/messages), with the official @anthropic-ai/sdk:
// to an Anthropic channel the client's request passes as bytes with only the
// model changed (and the answer's bytes come back), to an OpenAI channel it is
// translated both ways; each call billed exactly from the upstream's usage.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { completionRatioFor } from '../../../server/billing/prices';
import { countMessagesPromptTokens } from '../../../server/protocols/inbound/anthropicMessages';
import { countWords } from '../../support/openaiEmulator';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { ProtocolEmulator } from '../../support/emulators/types';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';
import {
  chargeFor,
  consumeLogCount,
  defaultModelRatio,
  expectBilled,
  expectBilledInTotal,
  expectSettledAfterLeaving,
  lastConsumeLog,
  resetRelay,
  startRelayHarness,
  type RelayHarness,
} from './harness';

const CLAUDE = ANTHROPIC_CHANNELS[0];
const CLAUDE_MODEL = CLAUDE.chatModel;
const GPT = 'gpt-4';

let harness: RelayHarness;
let client: Anthropic;
let anthropic: AnthropicEmulator;
let gemini: ProtocolEmulator;
const GEMINI = GEMINI_CHANNELS[0];

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new Anthropic({ apiKey: harness.apiKey, baseURL: harness.baseUrl, maxRetries: 0 });
  anthropic = await startAnthropicEmulator();
  gemini = await startGeminiEmulator();
});
afterAll(async () => {
  await harness.close();
  await anthropic.close();
  await gemini.close();
});
beforeEach(async () => {
  await resetRelay(harness);
});

const addClaude = () =>
  harness.addChannel({ type: CLAUDE.type, name: 'claude', key: CLAUDE.key, base_url: CLAUDE.baseUrl(anthropic), models: CLAUDE_MODEL });
const addOpenAi = () => harness.addChannel({ name: 'openai', key: 'sk-good', models: GPT });

const charge = chargeFor;

const lastLog = () => lastConsumeLog(harness);

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The event types of a stream in order, runs of deltas folded into one. */
function eventOrder(types: string[]): string[] {
  return types.filter((type, index) => type !== 'ping' && !(type === 'content_block_delta' && types[index - 1] === 'content_block_delta'));
}

describe('/v1/messages to an Anthropic channel (passthrough)', () => {
  it('passes the client bytes on with only the model changed, answers the vendor bytes, bills the reported usage', async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    const message = await client.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: 'hello there friend' }],
      temperature: 0.3,
      top_k: 5,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });
    expect(message.type).toBe('message');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Anthropic, you said: hello there friend' }]);
    expect(message.stop_reason).toBe('end_turn');
    const sent = anthropic.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(CLAUDE.key);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    // the very request the SDK made, unchanged
    expect(sent.body).toEqual({
      model: CLAUDE_MODEL,
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: 'hello there friend' }],
      temperature: 0.3,
      top_k: 5,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });
    const reported = anthropic.reported.at(-1)!;
    expect(message.usage.input_tokens).toBe(reported.promptTokens);
    expect(message.usage.output_tokens).toBe(reported.completionTokens);
    await expectBilled(harness, before, channelId, CLAUDE_MODEL, charge(CLAUDE_MODEL, reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 0,
    });
    // the consume log names the client protocol
    expect((await lastLog()).content).toContain('client protocol anthropic');
  });

  it('changes only the model when the channel maps it', async () => {
    await harness.addChannel({
      type: CLAUDE.type,
      name: 'claude',
      key: CLAUDE.key,
      base_url: CLAUDE.baseUrl(anthropic),
      models: 'claude-3-5-haiku-latest',
      model_mapping: JSON.stringify({ 'claude-3-5-haiku-latest': CLAUDE_MODEL }),
    });
    await client.messages.create(
      { model: 'claude-3-5-haiku-latest', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
    );
    const sent = anthropic.requests.at(-1)!;
    expect(sent.body).toEqual({ model: CLAUDE_MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    // the client's beta flags go on; the key is the channel's
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(sent.headers['x-api-key']).toBe(CLAUDE.key);
    expect(sent.headers.authorization).toBeUndefined();
  });

  it('streams the vendor events as they came and bills the stream usage (prompt-cache reads and writes too)', async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    const prompt = `${'preamble '.repeat(40)}[cache_read:10] [cache_creation:12] one two three`;
    const stream = client.messages.stream({ model: CLAUDE_MODEL, max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    expect(eventOrder(types)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(final.content[0]).toMatchObject({ type: 'text', text: `Hello from Anthropic, you said: ${prompt}` });
    const reported = anthropic.reported.at(-1)!;
    expect(reported.cachedPromptTokens).toBe(10);
    expect(reported.cacheCreationTokens).toBe(12);
    const ratio = defaultModelRatio(CLAUDE_MODEL);
    const expected = Math.floor(
      (reported.promptTokens - 10 - 12 + 10 * 0.1 + 12 * 1.25 + Math.floor(reported.completionTokens * completionRatioFor(CLAUDE_MODEL))) *
        ratio,
    );
    await expectBilled(harness, before, channelId, CLAUDE_MODEL, expected, {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 1,
    });
  });

  it('calls a tool and takes its result back (tool_use, tool_result), streamed and not', async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    const question = 'what is the get_weather in Paris';
    const first = await client.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [{ role: 'user', content: question }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block) => block.type === 'tool_use')!;
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: question } });
    const firstReported = anthropic.reported.at(-1)!;
    const stream = client.messages.stream({
      model: CLAUDE_MODEL,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny and warm' }] },
      ],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Hello from Anthropic, the tool said: sunny and warm' });
    expect(final.stop_reason).toBe('end_turn');
    const secondReported = anthropic.reported.at(-1)!;
    // both calls billed at their own usage: the balances by the sum, the last log by the second
    const total = charge(CLAUDE_MODEL, firstReported) + charge(CLAUDE_MODEL, secondReported);
    await expectBilledInTotal(harness, before, channelId, total, {
      quota: charge(CLAUDE_MODEL, secondReported),
      prompt_tokens: secondReported.promptTokens,
      completion_tokens: secondReported.completionTokens,
      is_stream: 1,
    });
  });

  it("answers the vendor's refusal in Anthropic's shape", async () => {
    await harness.addChannel({
      type: CLAUDE.type,
      name: 'claude',
      key: CLAUDE.key,
      base_url: CLAUDE.baseUrl(anthropic),
      models: CLAUDE_MODEL,
    });
    const before = await harness.balances();
    // the emulator refuses two user turns in a row; the gateway passes the request as it is
    const error = await client.messages
      .create({
        model: CLAUDE_MODEL,
        max_tokens: 10,
        messages: [
          { role: 'assistant', content: 'first' },
          { role: 'user', content: 'x' },
        ],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
  });
});

describe('/v1/messages: a client that leaves mid-stream', () => {
  it('is billed for what the Anthropic channel streamed before it left (counted), and nothing stays held', async () => {
    const slow = await startAnthropicEmulator({ wordDelayMs: 60 });
    try {
      const channelId = await harness.addChannel({
        type: CLAUDE.type,
        name: 'slow claude',
        key: CLAUDE.key,
        base_url: CLAUDE.baseUrl(slow),
        models: CLAUDE_MODEL,
      });
      const before = await harness.balances();
      const logsBefore = await consumeLogCount(harness);
      const said = 'one two three four five six seven eight nine ten eleven twelve';
      const leave = new AbortController();
      const response = await fetch(`${harness.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: CLAUDE_MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: said }] }),
        signal: leave.signal,
      });
      const reader = response.body!.getReader();
      let seen = '';
      while ((seen.match(/"text_delta"/g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
      leave.abort();
      // the vendor would have sent 17 words ("Hello from Anthropic, you said: " and the twelve)
      // the gateway settles once it sees the client gone
      const log = await expectSettledAfterLeaving(harness, before, logsBefore);
      expect(log).toMatchObject({
        channel_id: channelId,
        is_stream: 1,
        prompt_tokens: countMessagesPromptTokens({ messages: [{ role: 'user', content: said }] }, CLAUDE_MODEL),
      });
      expect(log.completion_tokens).toBeGreaterThanOrEqual(3);
      expect(log.completion_tokens).toBeLessThan(17);
    } finally {
      await slow.close();
    }
  });
});

describe('/v1/messages passthrough stream bytes', () => {
  it("hands the vendor's events on unchanged, ping included", async () => {
    await addClaude();
    const response = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: CLAUDE_MODEL, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'one two' }] }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    expect(text).toContain('event: ping');
    expect(text.match(/^event: (\S+)$/gm)?.filter((line) => line !== 'event: ping' && line !== 'event: content_block_delta')).toEqual([
      'event: message_start',
      'event: content_block_start',
      'event: content_block_stop',
      'event: message_delta',
      'event: message_stop',
    ]);
  });
});

describe('/v1/messages to an OpenAI channel (translated)', () => {
  it('answers a Messages answer from a chat completion and bills its usage', async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const message = await client.messages.create({
      model: GPT,
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there friend' }] }],
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: GPT, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: 'text', text: 'word0 word1 word2 word3 word4' }]);
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toEqual({
      model: GPT,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there friend' },
      ],
      max_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      user: 'u-1',
    });
    const promptTokens = countWords('Be brief. hello there friend');
    expect(message.usage).toMatchObject({
      input_tokens: promptTokens,
      output_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 0,
    });
  });

  it("streams Anthropic's event sequence from the chat chunks and bills the stream's usage", async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const stream = client.messages.stream({ model: GPT, max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] });
    const types: string[] = [];
    const texts: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (text) => texts.push(text));
    const final = await stream.finalMessage();
    expect(eventOrder(types)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(texts.join('')).toBe('word0 word1 word2 word3 word4');
    expect(texts.length).toBe(5);
    expect(final).toMatchObject({
      role: 'assistant',
      model: GPT,
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'word0 word1 word2 word3 word4' }],
    });
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const promptTokens = countWords('one two three');
    expect(final.usage).toMatchObject({ input_tokens: promptTokens, output_tokens: 5 });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 1,
    });
    expect((await lastLog()).content).toContain('client protocol anthropic');
  });

  it('translates tools, tool_use history and tool_result blocks into OpenAI tools, tool_calls and tool messages', async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const message = await client.messages.create({
      model: GPT,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
            { type: 'text', text: 'and now?' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'word0 word1 word2 word3 word4' }]);
    expect(harness.emulator.requests.at(-1)!.body).toEqual({
      model: GPT,
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_TOOL.input_schema },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const promptTokens = countWords('weather in Paris? Checking. sunny and now?');
    expect(message.usage.input_tokens).toBe(promptTokens);
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
    });
  });
});

describe('/v1/messages with extended thinking to channels of other vendors', () => {
  it("asks an OpenAI reasoning model for an effort by the client's budget, and a model that does not reason for nothing", async () => {
    await harness.addChannel({ name: 'openai', key: 'sk-good', models: `${GPT},o3-mini` });
    const ask = (model: string) =>
      client.messages.create({
        model,
        max_tokens: 20000,
        thinking: { type: 'enabled', budget_tokens: 16000 },
        messages: [{ role: 'user', content: 'think hard' }],
      });
    await ask('o3-mini');
    expect(harness.emulator.requests.at(-1)!.body).toMatchObject({ model: 'o3-mini', reasoning_effort: 'high' });
    await ask(GPT);
    expect(harness.emulator.requests.at(-1)!.body).not.toHaveProperty('reasoning_effort');
    expect(harness.emulator.requests.at(-1)!.body).not.toHaveProperty('thinking');
  });

  it("gives a Gemini 2.5 channel a thinking budget by the client's", async () => {
    await harness.addChannel({
      type: GEMINI.type,
      name: 'gemini',
      key: GEMINI.key,
      base_url: GEMINI.baseUrl(gemini),
      models: 'gemini-2.5-flash',
    });
    await client.messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'think a little' }],
    });
    const sent = gemini.requests.at(-1)!.body as { generationConfig?: { thinkingConfig?: unknown } };
    expect(sent.generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 1024 });
  });
});

describe('/v1/messages: keys, required fields, count_tokens', () => {
  it('takes the key from Authorization: Bearer as well as x-api-key', async () => {
    await addOpenAi();
    const response = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.apiKey}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: GPT, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ type: 'message', content: [{ type: 'text' }] });
  });

  it("refuses a missing max_tokens with Anthropic's 400, and charges nothing", async () => {
    await addClaude();
    const before = await harness.balances();
    const requests = anthropic.requests.length;
    const error = await client.messages
      .create({ model: CLAUDE_MODEL, messages: [{ role: 'user', content: 'hi' }] } as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const failure = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(failure.status).toBe(400);
    expect(failure.error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    expect(anthropic.requests.length).toBe(requests);
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });

  it("refuses a bad key with Anthropic's 401 authentication_error", async () => {
    await addClaude();
    const bad = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: harness.baseUrl, maxRetries: 0 });
    const error = await bad.messages
      .create({ model: CLAUDE_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    const failure = error as InstanceType<typeof Anthropic.AuthenticationError>;
    expect(failure.status).toBe(401);
    expect(failure.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const counted = await bad.messages
      .countTokens({ model: CLAUDE_MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(counted).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("lists the models in Anthropic's shape to a client that sends anthropic-version", async () => {
    await addClaude();
    await addOpenAi();
    const page = await client.models.list();
    const ids = page.data.map((model) => model.id);
    expect(ids).toEqual([CLAUDE_MODEL, GPT].sort());
    expect(page.data[0]).toEqual({
      type: 'model',
      id: ids[0],
      display_name: ids[0],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const bad = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: harness.baseUrl, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    // an OpenAI client still gets OpenAI's list
    const openAiList = (await (
      await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${harness.apiKey}` } })
    ).json()) as { object: string };
    expect(openAiList.object).toBe('list');
  });

  it('counts tokens locally, without calling or billing anything', async () => {
    await addClaude();
    const before = await harness.balances();
    const requests = anthropic.requests.length;
    const body = {
      model: CLAUDE_MODEL,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: 'hello there friend, how are you today?' }],
      tools: [WEATHER_TOOL],
    };
    const counted = await client.messages.countTokens(body);
    expect(counted.input_tokens).toBe(countMessagesPromptTokens(body, CLAUDE_MODEL));
    expect(counted.input_tokens).toBeGreaterThan(10);
    expect(anthropic.requests.length).toBe(requests);
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });
});

describe('/v1/messages to a Gemini channel (translated both ways, tool calls in the answer)', () => {
  const addGemini = () =>
    harness.addChannel({ type: GEMINI.type, name: 'gemini', key: GEMINI.key, base_url: GEMINI.baseUrl(gemini), models: GEMINI.chatModel });

  it('answers a tool call as a tool_use block, streamed as content_block_start + input_json_delta, and takes the tool_result back', async () => {
    const channelId = await addGemini();
    const model = GEMINI.chatModel;
    const before = await harness.balances();
    const question = 'weather in Paris';
    const first = await client.messages.create({
      model,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [{ role: 'user', content: question }],
    });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: { city: question } },
    ]);
    const firstReported = gemini.reported.at(-1)!;
    expect(first.usage).toMatchObject({ input_tokens: firstReported.promptTokens, output_tokens: firstReported.completionTokens });

    const stream = client.messages.stream({
      model,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [{ role: 'user', content: question }],
    });
    const events: Array<{ type: string; [field: string]: unknown }> = [];
    stream.on('streamEvent', (event) => events.push(event as never));
    const streamed = await stream.finalMessage();
    expect(eventOrder(events.map((event) => event.type))).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.find((event) => event.type === 'content_block_start')).toMatchObject({
      index: 0,
      content_block: { type: 'tool_use', name: 'get_weather', input: {} },
    });
    expect(events.find((event) => event.type === 'content_block_delta')).toMatchObject({ index: 0, delta: { type: 'input_json_delta' } });
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'tool_use' } });
    expect(streamed.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: { city: question } },
    ]);
    const streamReported = gemini.reported.at(-1)!;

    const use = first.content[0] as { id: string };
    const answer = await client.messages.create({
      model,
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
      ],
    });
    expect(answer.stop_reason).toBe('end_turn');
    expect(answer.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Hello from Gemini, the tool said:') });
    expect(answer.content[0]).toMatchObject({ text: expect.stringContaining('sunny') });
    const lastReported = gemini.reported.at(-1)!;
    const total = [firstReported, streamReported, lastReported].reduce((sum, usage) => sum + charge(model, usage), 0);
    await expectBilledInTotal(harness, before, channelId, total, {
      quota: charge(model, lastReported),
      prompt_tokens: lastReported.promptTokens,
      completion_tokens: lastReported.completionTokens,
    });
  });
});
