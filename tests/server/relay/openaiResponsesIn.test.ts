// OpenAI Responses in (POST /v1/responses), with the official openai SDK: to
// OpenAI's own type the client's request passes as bytes with only the model
// changed (and the answer's bytes come back), to a chat-completions channel
// and to an Anthropic channel it is translated both ways; each call billed
// exactly from the upstream's usage.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countResponsesPromptTokens } from '../../../server/protocols/inbound/openaiResponses';
import { countWords, startOpenAIEmulator } from '../../support/openaiEmulator';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';
import {
  chargeFor,
  consumeLogCount,
  expectBilled,
  expectBilledInTotal,
  lastConsumeLog,
  nextConsumeLog,
  resetRelay,
  startRelayHarness,
  type Balances,
  type RelayHarness,
} from './harness';

const GPT = 'gpt-4';
const CLAUDE = ANTHROPIC_CHANNELS[0];

let harness: RelayHarness;
let client: OpenAI;
let anthropic: AnthropicEmulator;
/** The bodies the SDK sent, as bytes. */
const sentBodies: string[] = [];
/** The bodies the gateway answered the SDK, as text. */
const answeredBodies: string[] = [];

beforeAll(async () => {
  harness = await startRelayHarness();
  anthropic = await startAnthropicEmulator();
  client = new OpenAI({
    apiKey: harness.apiKey,
    baseURL: `${harness.baseUrl}/v1`,
    maxRetries: 0,
    fetch: async (url, init) => {
      if (typeof init?.body === 'string') sentBodies.push(init.body);
      const response = await fetch(url, init);
      if ((response.headers.get('content-type') ?? '').includes('json')) answeredBodies.push(await response.clone().text());
      return response;
    },
  });
});
afterAll(async () => {
  await harness.close();
  await anthropic.close();
});
beforeEach(async () => {
  await resetRelay(harness);
});

const addOpenAi = (fields: Record<string, unknown> = {}) =>
  harness.addChannel({ type: 1, name: 'openai', key: 'sk-good', base_url: harness.emulator.baseUrl, models: GPT, ...fields });
const addCustom = () => harness.addChannel({ name: 'custom', key: 'sk-good', models: GPT });

const charge = chargeFor;

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The event types of a stream in order, runs of deltas folded into one. */
const eventOrder = (types: string[]) => types.filter((type, index) => !(type.endsWith('.delta') && types[index - 1] === type));

const TEXT_EVENTS = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];
const CALL_EVENTS = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.output_item.done',
  'response.completed',
];

/** Streams a request through the SDK: its events and final response. */
async function streamed(body: Parameters<OpenAI['responses']['stream']>[0]) {
  const stream = client.responses.stream(body);
  const events: Array<{ type: string; sequence_number: number }> = [];
  for await (const event of stream) events.push(event);
  return { events, types: events.map((event) => event.type), final: await stream.finalResponse() };
}

/** The text of a response's messages (the SDK adds `output_text` to a whole response only). */
const outputText = (response: OpenAI.Responses.Response) =>
  response.output
    .flatMap((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : []))
    .join('');

/** Two calls billed at their own usage. */
const expectBilledTwice = (before: Balances, channelId: number, first: number, second: number, log: Record<string, unknown>) =>
  expectBilledInTotal(harness, before, channelId, first + second, { quota: second, ...log });

describe('/v1/responses to an OpenAI channel (passthrough)', () => {
  it('passes the client bytes on unchanged, answers the vendor bytes, bills the reported usage', async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const response = await client.responses.create({
      model: GPT,
      instructions: 'Be brief.',
      input: 'hello there friend',
      temperature: 0.3,
      max_output_tokens: 100,
      metadata: { ticket: 't-1' },
      store: true,
    });
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe('Bearer sk-good');
    // the very bytes the SDK sent
    expect(sent.rawBody.toString('utf8')).toBe(sentBodies.at(-1));
    // the very bytes the vendor answered (its id and its `store: true`: no translation made them)
    const answered = JSON.parse(answeredBodies.at(-1)!);
    expect(answered).toMatchObject({ id: response.id, object: 'response', store: true, status: 'completed' });
    expect(response.id).toMatch(/^resp_emu/);
    expect(response.output_text).toBe('word0 word1 word2 word3 word4');
    const promptTokens = countWords('Be brief. hello there friend');
    expect(response.usage).toEqual({
      input_tokens: promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: promptTokens + 5,
    });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 0,
    });
    expect((await lastConsumeLog(harness)).content).toContain('client protocol openai-responses');
  });

  it('changes only the model when the channel maps it', async () => {
    await addOpenAi({ models: 'gpt-3.5-turbo', model_mapping: JSON.stringify({ 'gpt-3.5-turbo': GPT }) });
    await client.responses.create({ model: 'gpt-3.5-turbo', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] });
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.body).toEqual({ ...JSON.parse(sentBodies.at(-1)!), model: GPT });
  });

  it("streams the vendor's events as they came and bills the stream's usage, cached tokens priced as cached", async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const input = 'one two three four five six';
    const { events, types, final } = await streamed({ model: GPT, input, emulator: { cached_tokens: 4, reasoning_tokens: 3 } } as never);
    expect(eventOrder(types)).toEqual(TEXT_EVENTS);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(outputText(final)).toBe('word0 word1 word2 word3 word4');
    expect(final.id).toMatch(/^resp_emu/);
    const promptTokens = countWords(input);
    expect(final.usage).toMatchObject({
      input_tokens: promptTokens,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 8,
      output_tokens_details: { reasoning_tokens: 3 },
    });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 8, cachedPromptTokens: 4 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 8,
      is_stream: 1,
    });
  });

  it('answers a function call, then takes its output back', async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const question = 'what is the get_weather in Paris';
    const first = await client.responses.create({ model: GPT, tools: [WEATHER_TOOL], input: question });
    expect(first.output).toEqual([
      {
        id: expect.any(String),
        type: 'function_call',
        status: 'completed',
        arguments: JSON.stringify({ city: question }),
        call_id: expect.stringMatching(/^call_/),
        name: 'get_weather',
      },
    ]);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const firstCharge = charge(GPT, { promptTokens: countWords(question), completionTokens: countWords(call.arguments) });
    const { types, final } = await streamed({
      model: GPT,
      tools: [WEATHER_TOOL],
      input: [{ role: 'user', content: question }, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny and warm' }],
    });
    expect(eventOrder(types)).toEqual(TEXT_EVENTS);
    expect(outputText(final)).toBe('the tool said: sunny and warm');
    expect(harness.emulator.requests.at(-1)!.rawBody.toString('utf8')).toBe(sentBodies.at(-1));
    const promptTokens = countWords(`${question} sunny and warm`);
    await expectBilledTwice(
      before,
      channelId,
      firstCharge,
      charge(GPT, { promptTokens, completionTokens: countWords('the tool said: sunny and warm') }),
      {
        prompt_tokens: promptTokens,
        is_stream: 1,
      },
    );
  });
});

describe('/v1/responses to a chat-completions channel (translated)', () => {
  it('sends the request as a chat completion and answers a Response, billed by its usage', async () => {
    const channelId = await addCustom();
    const before = await harness.balances();
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const response = await client.responses.create({
      model: GPT,
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Answer in English.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'hello there' },
            { type: 'input_image', image_url: 'https://images.example/cat.png', detail: 'low' },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 100,
      user: 'u-1',
      metadata: { ticket: 't-1' },
      store: true,
      text: { format: { type: 'json_schema', name: 'reply', schema, strict: true } },
    });
    expect(harness.emulator.requests.at(-1)!.path).toBe('/v1/chat/completions');
    expect(harness.emulator.requests.at(-1)!.body).toEqual({
      model: GPT,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Answer in English.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello there' },
            { type: 'image_url', image_url: { url: 'https://images.example/cat.png', detail: 'low' } },
          ],
        },
      ],
      max_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } },
      user: 'u-1',
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: GPT,
      instructions: 'Be brief.',
      metadata: { ticket: 't-1' },
      temperature: 0.3,
      max_output_tokens: 100,
      store: false,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'word0 word1 word2 word3 word4', annotations: [] }],
        },
      ],
    });
    expect(response.id).toMatch(/^resp_/);
    const promptTokens = countWords('Be brief. Answer in English. hello there');
    expect(response.usage).toEqual({
      input_tokens: promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: promptTokens + 5,
    });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 0,
    });
    expect((await lastConsumeLog(harness)).content).toContain('client protocol openai-responses');
  });

  it("streams Responses' event sequence from the chat chunks, every event numbered, and bills the stream's usage", async () => {
    const channelId = await addCustom();
    const before = await harness.balances();
    const { events, types, final } = await streamed({ model: GPT, input: 'one two three' });
    expect(types).toEqual([...TEXT_EVENTS.slice(0, 5), ...Array(4).fill('response.output_text.delta'), ...TEXT_EVENTS.slice(5)]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(harness.emulator.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(final.status).toBe('completed');
    expect(outputText(final)).toBe('word0 word1 word2 word3 word4');
    const created = events[0] as unknown as { response: { id: string } };
    expect(final.id).toBe(created.response.id);
    const promptTokens = countWords('one two three');
    expect(final.usage).toMatchObject({ input_tokens: promptTokens, output_tokens: 5, total_tokens: promptTokens + 5 });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 1,
    });
  });

  it('translates function tools and calls both ways: a chat tool call becomes a function_call item, its output a tool message', async () => {
    const channelId = await addCustom();
    const before = await harness.balances();
    const question = 'what is the get_weather in Paris';
    const first = await client.responses.create({
      model: GPT,
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      input: question,
    });
    expect(harness.emulator.requests.at(-1)!.body).toEqual({
      model: GPT,
      messages: [{ role: 'user', content: question }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_TOOL.parameters, strict: true },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(first.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        arguments: JSON.stringify({ city: question }),
        call_id: expect.stringMatching(/^call_emu/),
        name: 'get_weather',
      },
    ]);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const firstCharge = charge(GPT, { promptTokens: countWords(question), completionTokens: countWords(call.arguments) });

    const { types, final: streamedCall } = await streamed({ model: GPT, tools: [WEATHER_TOOL], input: question });
    expect(eventOrder(types)).toEqual(CALL_EVENTS);
    expect(streamedCall.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: question }) }),
    ]);
    const streamCharge = charge(GPT, { promptTokens: countWords(question), completionTokens: countWords(call.arguments) });

    const answer = await client.responses.create({
      model: GPT,
      tools: [WEATHER_TOOL],
      input: [{ role: 'user', content: question }, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny and warm' }],
    });
    expect(harness.emulator.requests.at(-1)!.body).toMatchObject({
      messages: [
        { role: 'user', content: question },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: call.arguments } }],
        },
        { role: 'tool', tool_call_id: call.call_id, content: 'sunny and warm' },
      ],
    });
    expect(answer.output_text).toBe('word0 word1 word2 word3 word4');
    const promptTokens = countWords(`${question} sunny and warm`);
    await expectBilledTwice(before, channelId, firstCharge + streamCharge, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
    });
  });
});

describe('/v1/responses to an Anthropic channel (translated)', () => {
  it('answers a Response and a Responses stream from Claude, billed by its usage', async () => {
    const channelId = await harness.addChannel({
      type: CLAUDE.type,
      name: 'claude',
      key: CLAUDE.key,
      base_url: CLAUDE.baseUrl(anthropic),
      models: CLAUDE.chatModel,
    });
    const before = await harness.balances();
    const response = await client.responses.create({
      model: CLAUDE.chatModel,
      instructions: 'Be brief.',
      input: 'hello there friend',
      max_output_tokens: 64,
    });
    expect(anthropic.requests.at(-1)!.body).toMatchObject({
      model: CLAUDE.chatModel,
      system: 'Be brief.',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello there friend' }],
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      output_text: 'Hello from Anthropic, you said: hello there friend',
    });
    const firstReported = anthropic.reported.at(-1)!;
    expect(response.usage).toMatchObject({ input_tokens: firstReported.promptTokens, output_tokens: firstReported.completionTokens });

    const { types, final } = await streamed({ model: CLAUDE.chatModel, input: 'one two', max_output_tokens: 64 });
    expect(eventOrder(types)).toEqual(TEXT_EVENTS);
    expect(outputText(final)).toBe('Hello from Anthropic, you said: one two');
    const secondReported = anthropic.reported.at(-1)!;
    await expectBilledTwice(before, channelId, charge(CLAUDE.chatModel, firstReported), charge(CLAUDE.chatModel, secondReported), {
      prompt_tokens: secondReported.promptTokens,
      completion_tokens: secondReported.completionTokens,
      is_stream: 1,
    });
  });
});

describe('/v1/responses: stored state', () => {
  it("refuses previous_response_id with OpenAI's 400 on every channel, before anything is sent or held", async () => {
    await addOpenAi();
    const before = await harness.balances();
    const requests = harness.emulator.requests.length;
    const error = await client.responses
      .create({ model: GPT, input: 'and then?', previous_response_id: 'resp_123' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.status).toBe(400);
    expect(failure.error).toEqual({
      message: 'previous_response_id is not supported: this gateway does not store responses; send the whole conversation in input',
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'unsupported_parameter',
    });
    await resetRelay(harness);
    await addCustom();
    await expect(
      client.responses.create({ model: GPT, input: 'and then?', previous_response_id: 'resp_123', stream: true }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    expect(harness.emulator.requests.length).toBe(requests);
    const after = await harness.balances();
    expect(after.user).toEqual(before.user);
    expect(after.token).toEqual(before.token);
  });
});

describe('/v1/responses: a client that leaves mid-stream', () => {
  for (const [name, type] of [
    ['an OpenAI channel (passthrough)', 1],
    ['a chat-completions channel (translated)', 8],
  ] as const) {
    it(`is billed for what ${name} streamed before it left (counted), and nothing stays held`, async () => {
      const slow = await startOpenAIEmulator({ chunks: 20, delayMs: 60 });
      try {
        const channelId = await harness.addChannel({ type, name: 'slow', key: 'sk-good', base_url: slow.baseUrl, models: GPT });
        const before = await harness.balances();
        const logsBefore = await consumeLogCount(harness);
        const leave = new AbortController();
        const body = { model: GPT, input: 'count slowly', stream: true };
        const response = await fetch(`${harness.baseUrl}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.apiKey}` },
          body: JSON.stringify(body),
          signal: leave.signal,
        });
        const reader = response.body!.getReader();
        let seen = '';
        while ((seen.match(/"response\.output_text\.delta"/g) ?? []).length < 3)
          seen += new TextDecoder().decode((await reader.read()).value);
        leave.abort();
        const log = await nextConsumeLog(harness, logsBefore);
        const after = await harness.balances();
        expect(log).toMatchObject({ channel_id: channelId, is_stream: 1, prompt_tokens: countResponsesPromptTokens(body, GPT) });
        expect(log.completion_tokens).toBeGreaterThanOrEqual(3);
        expect(log.completion_tokens).toBeLessThan(20);
        expect(before.user.quota - after.user.quota).toBe(log.quota);
        expect(before.token.remain_quota - after.token.remain_quota).toBe(log.quota);
        const held = await harness.app.ctx.db
          .selectFrom('users')
          .select('held_quota')
          .where('username', '=', 'root')
          .executeTakeFirstOrThrow();
        expect(Number(held.held_quota)).toBe(0);
        // the upstream call was closed, not read to its end
        for (let wait = 0; wait < 50 && slow.abortedRequests === 0; wait += 1) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(slow.abortedRequests).toBe(1);
      } finally {
        await slow.close();
      }
    });
  }
});
