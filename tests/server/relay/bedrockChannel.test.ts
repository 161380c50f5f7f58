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
import { BEDROCK_ACCESS_KEY, BEDROCK_CHANNELS, BEDROCK_REGION, startBedrockEmulator, type BedrockEmulator, type BedrockReportedUsage } from '../../support/emulators/bedrock';
import { defaultModelRatio, expectBilled, resetRelay, startRelayHarness, type RelayHarness } from './harness';

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
  harness.addChannel({ type: 33, name: 'bedrock', key: IAM.key, base_url: IAM.baseUrl(bedrock), other: IAM.other, models: MODEL, ...fields });

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
    expect(completion.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'Hello from Bedrock, you said: hello there Bedrock' }, finish_reason: 'stop' });
    const call = bedrock.requests.at(-1)!;
    expect(call.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
    expect(String(call.headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_ACCESS_KEY}/\\d{8}/${BEDROCK_REGION}/bedrock/aws4_request, `));
    expect(call.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hello there Bedrock' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.3 },
    });
    const reported = bedrock.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), { prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens, is_stream: 0 });
  });

  it('streams the event-stream answer as chunks with one finish reason and usage, billed exactly', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'one two three four' }] });
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
    expect(usage).toEqual({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens, total_tokens: reported.promptTokens + reported.completionTokens });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), { is_stream: 1, completion_tokens: reported.completionTokens });
  });

  it('bills prompt-cache reads and writes as the vendor reports them, as Anthropic is billed', async () => {
    const channelId = await addBedrock();
    const before = await harness.balances();
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `${'preamble '.repeat(60)}[cache_read:20] [cache_write:30] please answer` }] });
    const reported = bedrock.reported.at(-1)!;
    expect([reported.cachedPromptTokens, reported.cacheCreationTokens]).toEqual([20, 30]);
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(20);
    const ratio = defaultModelRatio(MODEL);
    const expected = Math.floor(
      (reported.promptTokens - 50 + 20 * cachedPromptRatioFor(MODEL) + 30 * cacheCreationRatioFor(MODEL) + Math.floor(reported.completionTokens * completionRatioFor(MODEL))) * ratio,
    );
    expect(expected).toBe(chargeOf(reported));
    await expectBilled(harness, before, channelId, MODEL, expected, { prompt_tokens: reported.promptTokens });
  });

  it('calls a tool, streamed, and answers its result in the next turn', async () => {
    await addBedrock();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, tools, messages: [{ role: 'user', content: 'get_weather Paris' }] });
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
        { role: 'assistant', content: null, tool_calls: [{ id: calls[0].id, type: 'function', function: { name: 'get_weather', arguments: calls[0].arguments } }] },
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
    const throttled = await harness.post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'slow down [throttle]' }] });
    // the relay words a vendor's 429 its own way (the vendor's words go to the log)
    expect(throttled.status).toBe(429);
    expect(((await throttled.json()) as { error: { message: string } }).error.message).toMatch(/busy, please retry/);
    // a conversation that starts with the assistant: Converse refuses it
    const invalid = await harness.post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'assistant', content: 'I start' }] });
    expect(invalid.status).toBe(400);
    const byUrl = await harness.post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] });
    expect(byUrl.status).toBe(400);
    expect(((await byUrl.json()) as { error: { message: string } }).error.message).toContain('only inline');
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it('a throttlingException frame in the stream reaches the client as an error, never as a clean end', async () => {
    await addBedrock();
    const response = await harness.post('/v1/chat/completions', { model: MODEL, stream: true, messages: [{ role: 'user', content: 'fail please [stream_error]' }] });
    const text = await response.text();
    if (response.status === 200) {
      expect(text).toMatch(/data: \{"error":\{"message":"[^"]*","type":"[a-z_]+","param":null,"code":"[a-z_]+"\}\}\n\n$/);
      expect(text).not.toContain('[DONE]');
    } else {
      expect(response.status).toBe(429);
    }
  });

  it('serves an Anthropic Messages client too (translated to Converse and back), streamed, billed exactly', async () => {
    const channelId = await addBedrock();
    const anthropic = new Anthropic({ apiKey: harness.apiKey, baseURL: harness.baseUrl, maxRetries: 0 });
    const before = await harness.balances();
    const stream = anthropic.messages.stream({ model: MODEL, max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'hello from a Messages client' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Hello from Bedrock, you said: hello from a Messages client' });
    expect(final.stop_reason).toBe('end_turn');
    expect(bedrock.requests.at(-1)!.body).toMatchObject({ system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 200 } });
    const reported = bedrock.reported.at(-1)!;
    expect(final.usage).toMatchObject({ input_tokens: reported.promptTokens, output_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, MODEL, chargeOf(reported), { is_stream: 1 });
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
});
