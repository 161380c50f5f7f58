// AWS Bedrock (type 33) end to end: channels created through the channel API
// point at the Bedrock emulator, which verifies every call's SigV4 signature
// by signing it again with the secret; the official openai SDK calls chat
// whole and streamed, tools and the prompt cache included, and each call is
// billed exactly what the emulator reported. A key the emulator refuses
// disables its channel and the next channel answers; the channel test signs
// too; a stream's exception frame reaches the client as an error.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cacheCreationRatioFor, cachedPromptRatioFor, completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { countInputTokens } from '../../../server/protocols/inbound/tokenCount';
import {
  BEDROCK_ACCESS_KEY,
  BEDROCK_CHANNELS,
  BEDROCK_REGION,
  startBedrockEmulator,
  type BedrockEmulator,
  type BedrockReportedUsage,
} from '../../support/emulators/bedrock';
import {
  consumeLogCount,
  defaultModelRatio,
  expectBilled,
  expectSettledAfterLeaving,
  nextConsumeLog,
  resetRelay,
  startRelayHarness,
  type RelayHarness,
} from './harness';

const [IAM, API_KEY] = BEDROCK_CHANNELS;
const MODEL = IAM.chatModel;

let harness: RelayHarness;
let client: OpenAI;
let bedrock: BedrockEmulator;

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  bedrock = await startBedrockEmulator();
});
afterAll(async () => {
  await harness.close();
  await bedrock.close();
});
beforeEach(async () => {
  await resetRelay(harness);
  await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
});

const addBedrock = (fields: Record<string, unknown> = {}) =>
  harness.addChannel({
    type: 33,
    name: 'bedrock',
    key: IAM.key,
    base_url: IAM.baseUrl(bedrock),
    other: IAM.other,
    models: MODEL,
    ...fields,
  });

/** The exact charge for what the emulator reported, the cache reads and writes at the model's own ratios. */
const chargeOf = (usage: BedrockReportedUsage) =>
  computeQuota({
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    cacheCreationTokens: usage.cacheCreationTokens,
    cachedPromptRatio: cachedPromptRatioFor(MODEL),
    cacheCreationRatio: cacheCreationRatioFor(MODEL),
    ratio: defaultModelRatio(MODEL),
    completionRatio: completionRatioFor(MODEL),
  });

describe('an AWS Bedrock channel through the openai SDK', () => {
  it('signs the Converse call (verified by the emulator), maps the Claude name to its Bedrock id, and bills the reported usage', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there Bedrock' },
      ],
      temperature: 0.3,
      max_tokens: 100,
    });
    expect(completion.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'Hello from Bedrock, you said: hello there Bedrock' },
      finish_reason: 'stop',
    });
    const call = bedrock.requests.at(-1)!;
    expect(call.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
    expect(String(call.headers.authorization)).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_ACCESS_KEY}/\\d{8}/${BEDROCK_REGION}/bedrock/aws4_request, `),
    );
    expect(call.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hello there Bedrock' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.3 },
    });
    const reported = bedrock.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 0,
    });
  });

  it('streams the event-stream answer as chunks with one finish reason and usage, billed exactly', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    let text = '';
    let finishes = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        if (choice.finish_reason) finishes += 1;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from Bedrock, you said: one two three four');
    expect(finishes).toBe(1);
    expect(bedrock.requests.at(-1)!.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    const reported = bedrock.reported.at(-1)!;
    expect(usage).toEqual({
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      total_tokens: reported.promptTokens + reported.completionTokens,
    });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), {
      is_stream: 1,
      completion_tokens: reported.completionTokens,
    });
  });

  it('bills prompt-cache reads and writes as the vendor reports them, as Anthropic is billed', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: `${'preamble '.repeat(60)}[cache_read:20] [cache_write:30] please answer` }],
    });
    const reported = bedrock.reported.at(-1)!;
    expect([reported.cachedPromptTokens, reported.cacheCreationTokens]).toEqual([20, 30]);
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(20);
    const ratio = defaultModelRatio(MODEL);
    const expected = Math.floor(
      (reported.promptTokens -
        50 +
        20 * cachedPromptRatioFor(MODEL) +
        30 * cacheCreationRatioFor(MODEL) +
        Math.floor(reported.completionTokens * completionRatioFor(MODEL))) *
        ratio,
    );
    expect(expected).toBe(chargeOf(reported));
    await expectBilled(harness, before, channelId, MODEL, expected, { prompt_tokens: reported.promptTokens });
  });

  it('calls a tool, streamed, and answers its result in the next turn', async () => {
    await addBedrock();
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    ];
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'get_weather Paris' }],
    });
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[call.index] ??= { id: '', name: '', arguments: '' };
        calls[call.index].id += call.id ?? '';
        calls[call.index].name += call.function?.name ?? '';
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('get_weather');
    expect(JSON.parse(calls[0].arguments)).toEqual({ city: 'get_weather Paris' });
    const next = await client.chat.completions.create({
      model: MODEL,
      tools,
      messages: [
        { role: 'user', content: 'get_weather Paris' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: calls[0].id, type: 'function', function: { name: 'get_weather', arguments: calls[0].arguments } }],
        },
        { role: 'tool', tool_call_id: calls[0].id, content: 'sunny 21 C' },
      ],
    });
    expect(next.choices[0].message.content).toBe('Hello from Bedrock, the tool said: sunny 21 C');
  });

  it('takes a Bedrock API key as a bearer token', async () => {
    const channelId = await addBedrock({ key: API_KEY.key, other: API_KEY.other });
    const before = await harness.balances();
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'with an API key' }] });
    expect(completion.choices[0].message.content).toBe('Hello from Bedrock, you said: with an API key');
    expect(bedrock.requests.at(-1)!.headers.authorization).toMatch(/^Bearer ABSK/);
    await expectBilled(harness, before, channelId, MODEL, chargeOf(bedrock.reported.at(-1)!));
  });

  it('a key whose signature the vendor refuses disables the channel, the next one answers, and only that call is billed', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    await harness.app.ctx.options.set('RetryTimes', '1');
    const dead = await addBedrock({ name: 'bedrock-dead', key: IAM.deadKey, priority: 10 });
    const good = await addBedrock({ name: 'bedrock-good' });
    const refusals = bedrock.requests.length;
    const before = await harness.balances();
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'are you there' }] });
    expect(completion.choices[0].message.content).toBe('Hello from Bedrock, you said: are you there');
    // the dead key's call reached the emulator and was refused for its signature
    expect(bedrock.requests.length - refusals).toBe(2);
    const rows = await harness.app.ctx.db.selectFrom('channels').select(['id', 'status', 'auto_disabled']).orderBy('id').execute();
    expect(rows.map((row) => [row.id, Number(row.status), Number(row.auto_disabled)])).toEqual([
      [dead, 2, 1],
      [good, 1, 0],
    ]);
    await expectBilled(harness, before, good, MODEL, chargeOf(bedrock.reported.at(-1)!));
  });

  it("a throttled or invalid request comes back in OpenAI's shape and costs nothing", async () => {
    await addBedrock();
    const before = await harness.balances();
    const throttled = await harness.post('/v1/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: 'slow down [throttle]' }],
    });
    // the relay words a vendor's 429 its own way (the vendor's words go to the log)
    expect(throttled.status).toBe(429);
    expect(((await throttled.json()) as { error: { message: string } }).error.message).toMatch(/busy, please retry/);
    // a conversation that starts with the assistant: Converse refuses it
    const invalid = await harness.post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'assistant', content: 'I start' }] });
    expect(invalid.status).toBe(400);
    const byUrl = await harness.post('/v1/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    expect(byUrl.status).toBe(400);
    expect(((await byUrl.json()) as { error: { message: string } }).error.message).toContain('only inline');
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it('a throttlingException frame in the stream reaches the client as an error, never as a clean end', async () => {
    await addBedrock();
    const response = await harness.post('/v1/chat/completions', {
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: 'fail please [stream_error]' }],
    });
    const text = await response.text();
    if (response.status === 200) {
      expect(text).toMatch(/data: \{"error":\{"message":"[^"]*","type":"[a-z_]+","param":null,"code":"[a-z_]+"\}\}\n\n$/);
      expect(text).not.toContain('[DONE]');
    } else {
      expect(response.status).toBe(429);
    }
  });

  it('serves an Anthropic Messages client asking for a model other than Claude through Converse (translated and back), streamed, billed exactly', async () => {
    const nova = 'amazon.nova-lite-v1:0';
    const channelId = await addBedrock({ models: nova });
    const anthropic = new Anthropic({ apiKey: harness.apiKey, baseURL: harness.baseUrl, maxRetries: 0 });
    const before = await harness.balances();
    const stream = anthropic.messages.stream({
      model: nova,
      max_tokens: 200,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello from a Messages client' }],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Hello from Bedrock, you said: hello from a Messages client' });
    expect(final.stop_reason).toBe('end_turn');
    expect(bedrock.requests.at(-1)!.url).toBe('/model/amazon.nova-lite-v1%3A0/converse-stream');
    expect(bedrock.requests.at(-1)!.body).toMatchObject({ system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 200 } });
    const reported = bedrock.reported.at(-1)!;
    expect(final.usage).toMatchObject({ input_tokens: reported.promptTokens, output_tokens: reported.completionTokens });
    const charge = computeQuota({
      promptTokens: reported.promptTokens,
      completionTokens: reported.completionTokens,
      cachedPromptTokens: 0,
      ratio: defaultModelRatio(nova),
      completionRatio: completionRatioFor(nova),
    });
    await expectBilled(harness, before, channelId, nova, charge, { is_stream: 1 });
  });

  it('the channel test signs its call too, and reports a refused key', async () => {
    const good = await addBedrock();
    expect(await harness.admin('GET', `/api/channel/test/${good}`)).toMatchObject({ success: true });
    expect(bedrock.requests.at(-1)!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    const dead = await addBedrock({ name: 'dead', key: IAM.deadKey });
    const tested = await harness.admin('GET', `/api/channel/test/${dead}`);
    expect(tested.success).toBe(false);
    expect(tested.message).toContain('signature we calculated does not match');
    // the secret is never echoed to the console
    expect(JSON.stringify(tested)).not.toContain('not-the-secret');
  });

  it('the channel test of a channel whose test model reranks asks a signed rerank, not a chat', async () => {
    const id = await addBedrock({ name: 'reranker', models: 'cohere.rerank-v3-5:0', test_model: 'cohere.rerank-v3-5:0' });
    expect(await harness.admin('GET', `/api/channel/test/${id}`)).toMatchObject({ success: true });
    const asked = bedrock.requests.at(-1)!;
    expect(asked.url).toBe('/rerank');
    expect(asked.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(asked.body).toMatchObject({ queries: [{ type: 'TEXT', textQuery: { text: 'hi' } }] });
  });
});

describe('Claude on an AWS Bedrock channel for an Anthropic Messages client (InvokeModel, passed through)', () => {
  const anthropicClient = () => new Anthropic({ apiKey: harness.apiKey, baseURL: harness.baseUrl, maxRetries: 0 });
  const tools: Anthropic.Tool[] = [
    {
      name: 'get_weather',
      description: 'The weather',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      cache_control: { type: 'ephemeral' },
    },
  ];

  it("sends the client's own body to InvokeModel (signed), without model and stream, with Bedrock's anthropic_version, and bills the answer's usage, cache included", async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const message = await anthropicClient().messages.create(
      {
        model: MODEL,
        max_tokens: 300,
        system: [{ type: 'text', text: `${'context '.repeat(40)}[cache_read:25] [cache_write:10]`, cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hello native Claude' }],
        tools,
        tool_choice: { type: 'auto' },
        metadata: { user_id: 'user-42' },
        temperature: 0.2,
      },
      { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' } },
    );
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Bedrock, you said: hello native Claude' }]);
    expect(message.stop_reason).toBe('end_turn');
    const call = bedrock.requests.at(-1)!;
    expect(call.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke');
    expect(String(call.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=/);
    // everything the client sent, as it sent it: nothing lost to a translation
    expect(call.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['token-efficient-tools-2025-02-19'],
      max_tokens: 300,
      system: [{ type: 'text', text: `${'context '.repeat(40)}[cache_read:25] [cache_write:10]`, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'hello native Claude' }],
      tools,
      tool_choice: { type: 'auto' },
      metadata: { user_id: 'user-42' },
      temperature: 0.2,
    });
    const reported = bedrock.reported.at(-1)!;
    expect([reported.cachedPromptTokens, reported.cacheCreationTokens]).toEqual([25, 10]);
    expect(message.usage).toMatchObject({
      input_tokens: reported.promptTokens - 35,
      cache_read_input_tokens: 25,
      cache_creation_input_tokens: 10,
      output_tokens: reported.completionTokens,
    });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), {
      is_stream: 0,
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
    });
  });

  it("streams InvokeModelWithResponseStream's chunks as Anthropic's own events (with a Bedrock API key), billed exactly, cache included", async () => {
    const channelId = await addBedrock({ key: API_KEY.key, other: API_KEY.other });
    const before = await harness.balances();
    const stream = anthropicClient().messages.stream({
      model: MODEL,
      max_tokens: 300,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: `${'history '.repeat(30)}[cache_read:12] [cache_write:6] stream it please` }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: `Hello from Bedrock, you said: ${'history '.repeat(30)}[cache_read:12] [cache_write:6] stream it please` },
    ]);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('message_delta');
    const call = bedrock.requests.at(-1)!;
    expect(call.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream');
    expect(call.headers.authorization).toMatch(/^Bearer ABSK/);
    expect(call.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(call.body).not.toHaveProperty('stream');
    const reported = bedrock.reported.at(-1)!;
    expect(final.usage).toMatchObject({
      cache_read_input_tokens: 12,
      cache_creation_input_tokens: 6,
      output_tokens: reported.completionTokens,
    });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), {
      is_stream: 1,
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
    });
  });

  it("passes the vendor's events on as Anthropic's SSE, byte for byte what the chunks held", async () => {
    await addBedrock();
    const response = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'one two' }] }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.map((event) => event.split('\n')[0])).toEqual([
      'event: message_start',
      'event: content_block_start',
      ...Array.from({ length: 7 }, () => 'event: content_block_delta'),
      'event: content_block_stop',
      'event: message_delta',
      'event: message_stop',
    ]);
    // Bedrock's invocation metrics ride on message_stop, as the vendor sent them
    expect(JSON.parse(events.at(-1)!.split('\ndata: ')[1])).toMatchObject({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': { outputTokenCount: 7 },
    });
  });

  it("an exception frame mid-stream reaches the client as Anthropic's error event; a throttle before the answer is a 429 and costs nothing", async () => {
    await addBedrock();
    const response = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'fail please [stream_error]' }],
      }),
    });
    const text = await response.text();
    expect(text).toMatch(/^event: message_start\n/);
    expect(
      text.endsWith(
        'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many requests, please wait before trying again."}}\n\n',
      ),
    ).toBe(true);
    const before = await harness.balances();
    const error = await anthropicClient()
      .messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'slow down [throttle]' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
  });

  it('a stream the upstream cuts mid-frame is billed by its count, and start - logged charges = balance, nothing held', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const logsBefore = await consumeLogCount(harness);
    const response = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'cut me off [cut]' }] }),
    });
    const text = await response.text().catch(() => '');
    expect(text).toContain('"text_delta"');
    expect(text).not.toContain('message_stop');
    const log = await nextConsumeLog(harness, logsBefore);
    expect(log).toMatchObject({ channel_id: channelId, is_stream: 1 });
    expect(log.quota).toBeGreaterThan(0);
    const after = await harness.balances();
    expect(before.user.quota - after.user.quota).toBe(log.quota);
    expect(before.token.remain_quota - after.token.remain_quota).toBe(log.quota);
    const held = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow();
    expect(Number(held.held_quota)).toBe(0);
  });
});

describe('Claude on Bedrock for a Messages client that leaves mid-stream', () => {
  it('is billed for what was streamed before it left (counted), the upstream call ends, and nothing stays held', async () => {
    const slow = await startBedrockEmulator({ wordDelayMs: 60 });
    try {
      const channelId = await harness.addChannel({
        type: 33,
        name: 'slow bedrock',
        key: IAM.key,
        base_url: IAM.baseUrl(slow),
        models: MODEL,
      });
      const before = await harness.balances();
      const logsBefore = await consumeLogCount(harness);
      const leave = new AbortController();
      const response = await fetch(`${harness.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: MODEL,
          max_tokens: 100,
          stream: true,
          messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve' }],
        }),
        signal: leave.signal,
      });
      const reader = response.body!.getReader();
      let seen = '';
      while ((seen.match(/"text_delta"/g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
      leave.abort();
      const log = await expectSettledAfterLeaving(harness, before, logsBefore);
      expect(log).toMatchObject({ channel_id: channelId, is_stream: 1 });
      // the emulator would have sent 17 words; it stopped when the gateway ended the call
      expect(log.completion_tokens).toBeGreaterThanOrEqual(3);
      expect(log.completion_tokens).toBeLessThan(17);
      expect(slow.reported).toHaveLength(0);
    } finally {
      await slow.close();
    }
  });
});

describe('embeddings on an AWS Bedrock channel through the openai SDK (InvokeModel)', () => {
  it("Titan: one signed InvokeModel per input, joined in the client's order, billed at Titan's own token count", async () => {
    const titan = 'amazon.titan-embed-text-v2:0';
    const channelId = await addBedrock({ models: titan });
    const calls = bedrock.requests.length;
    const before = await harness.balances();
    const result = await client.embeddings.create({
      model: titan,
      input: ['first text here', 'a second, longer one of five words'],
      dimensions: 256,
    });
    expect(result.data.map((item) => item.index)).toEqual([0, 1]);
    expect(result.data.map((item) => item.embedding.length)).toEqual([256, 256]);
    // the SDK asked for base64 (its default) and decoded the float32s: the emulator's unit vectors come back whole
    for (const item of result.data) expect(Math.hypot(...item.embedding)).toBeCloseTo(1, 5);
    const sent = bedrock.requests.slice(calls);
    expect(sent.map((call) => call.url)).toEqual([
      '/model/amazon.titan-embed-text-v2%3A0/invoke',
      '/model/amazon.titan-embed-text-v2%3A0/invoke',
    ]);
    expect(sent.map((call) => call.body)).toEqual([
      { inputText: 'first text here', dimensions: 256 },
      { inputText: 'a second, longer one of five words', dimensions: 256 },
    ]);
    expect(sent.every((call) => String(call.headers.authorization).startsWith('AWS4-HMAC-SHA256 '))).toBe(true);
    const tokens = bedrock.reported.slice(-2).reduce((sum, usage) => sum + usage.promptTokens, 0);
    expect(tokens).toBe(3 + 7);
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    const charge = computeQuota({
      promptTokens: tokens,
      completionTokens: 0,
      cachedPromptTokens: 0,
      ratio: defaultModelRatio(titan),
      completionRatio: 1,
    });
    await expectBilled(harness, before, channelId, titan, charge, { prompt_tokens: tokens, completion_tokens: 0 });
  });

  it('Cohere Embed: one InvokeModel for every text, with its input type; billed at the gateway’s own count, as Bedrock reports none', async () => {
    const cohere = 'cohere.embed-english-v3';
    const channelId = await addBedrock({ models: cohere, key: API_KEY.key, other: API_KEY.other });
    const before = await harness.balances();
    const input = ['alpha beta gamma', 'delta'];
    const result = await client.embeddings.create({ model: cohere, input, input_type: 'search_query' } as OpenAI.EmbeddingCreateParams);
    expect(result.data.map((item) => [item.index, item.embedding.length])).toEqual([
      [0, 1024],
      [1, 1024],
    ]);
    const call = bedrock.requests.at(-1)!;
    expect(call.url).toBe('/model/cohere.embed-english-v3/invoke');
    expect(call.body).toEqual({ texts: input, input_type: 'search_query' });
    const tokens = countInputTokens(input, cohere, {});
    const charge = computeQuota({
      promptTokens: tokens,
      completionTokens: 0,
      cachedPromptTokens: 0,
      ratio: defaultModelRatio(cohere),
      completionRatio: 1,
    });
    await expectBilled(harness, before, channelId, cohere, charge, { prompt_tokens: tokens });
  });

  it('Titan refuses token arrays with the reason, nothing charged', async () => {
    const titan = 'amazon.titan-embed-text-v2:0';
    await addBedrock({ models: titan });
    const before = await harness.balances();
    const refused = await harness.post('/v1/embeddings', { model: titan, input: [[1, 2, 3]] });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('text only');
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });
});
