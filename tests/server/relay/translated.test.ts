// The translated path end to end: an Anthropic channel (type 14) behind the
// gateway, called with the official openai SDK. The request is encoded as a
// Messages call, the answer (whole or streamed) decoded back into OpenAI's
// shape, and the bill is exactly what the vendor reported; a dead key
// disables the channel and the next one answers; a client that leaves
// mid-stream pays for what it was sent and the vendor's stream is closed; a
// channel whose adaptor has no embeddings is passed by.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cachedPromptRatioFor, completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { countChatPromptTokens, countTextTokens } from '../../../server/protocols/inbound/tokenCount';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';
import { defaultModelRatio, expectBilled, lastConsumeLog, resetRelay, startRelayHarness, type RelayHarness } from './harness';

const CLAUDE = ANTHROPIC_CHANNELS[0];
const MODEL = CLAUDE.chatModel;

let harness: RelayHarness;
let client: OpenAI;
let anthropic: AnthropicEmulator;
/** Streams one word per 100 ms: time for a client to leave in the middle. */
let slowAnthropic: AnthropicEmulator;

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  anthropic = await startAnthropicEmulator();
  slowAnthropic = await startAnthropicEmulator({ wordDelayMs: 100 });
});
afterAll(async () => {
  await harness.close();
  await anthropic.close();
  await slowAnthropic.close();
});
beforeEach(async () => {
  await resetRelay(harness);
  await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
});

const addClaude = (fields: Record<string, unknown> = {}) =>
  harness.addChannel({ type: CLAUDE.type, name: 'claude', key: CLAUDE.key, base_url: CLAUDE.baseUrl(anthropic), models: MODEL, ...fields });

const charge = (promptTokens: number, completionTokens: number, cachedPromptTokens = 0) =>
  computeQuota({
    promptTokens,
    completionTokens,
    cachedPromptTokens,
    cachedPromptRatio: cachedPromptRatioFor(MODEL),
    ratio: defaultModelRatio(MODEL),
    completionRatio: completionRatioFor(MODEL),
  });

const lastLog = () => lastConsumeLog(harness);

describe('an Anthropic channel through the openai SDK', () => {
  it('answers a chat as a chat.completion, sends system and sampling the Anthropic way, and bills the reported usage', async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there friend' },
      ],
      temperature: 0.3,
      stop: ['END'],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.content).toBe('Hello from Anthropic, you said: hello there friend');
    expect(completion.choices[0].finish_reason).toBe('stop');
    const sent = anthropic.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(CLAUDE.key);
    expect(sent.body).toMatchObject({ model: MODEL, system: 'Be brief.', temperature: 0.3, stop_sequences: ['END'] });
    const reported = anthropic.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, MODEL, charge(reported.promptTokens, reported.completionTokens), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 0,
    });
  });

  it("bills prompt-cache reads at Anthropic's 1/10 and cache writes at its 1.25x, as the vendor reports them", async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    // the emulator moves tokens of the prompt into the cache fields when the prompt says so
    const prompt = `${'preamble '.repeat(60)}[cache_read:20] [cache_creation:30] please answer`;
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: prompt }] });
    const reported = anthropic.reported.at(-1)!;
    expect(reported.cachedPromptTokens).toBe(20);
    expect(reported.cacheCreationTokens).toBe(30);
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(20);
    const { promptTokens, completionTokens } = reported;
    // uncached input at 1, 20 read tokens at 0.1, 30 written tokens at 1.25
    const ratio = defaultModelRatio(MODEL);
    const expected = Math.floor(
      (promptTokens - 20 - 30 + 20 * 0.1 + 30 * 1.25 + Math.floor(completionTokens * completionRatioFor(MODEL))) * ratio,
    );
    expect(expected).toBeGreaterThan(charge(promptTokens, completionTokens, 20));
    await expectBilled(harness, before, channelId, MODEL, expected, { prompt_tokens: promptTokens, completion_tokens: completionTokens });
  });

  it('streams chunks as they are decoded, ends with [DONE], and bills the reported usage', async () => {
    const channelId = await addClaude();
    const before = await harness.balances();
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    let text = '';
    let finishes = 0;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      // no usage chunk unless asked for
      expect(chunk.usage ?? undefined).toBeUndefined();
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes += 1;
    }
    expect(text).toBe('Hello from Anthropic, you said: one two three four');
    expect(chunks).toBeGreaterThan(5);
    expect(finishes).toBe(1);
    expect((anthropic.requests.at(-1)!.body as { stream?: boolean }).stream).toBe(true);
    const reported = anthropic.reported.at(-1)!;
    await expectBilled(harness, before, channelId, MODEL, charge(reported.promptTokens, reported.completionTokens), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 1,
    });
  });

  it('honours stream_options.include_usage with a final usage chunk without choices', async () => {
    await addClaude();
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count my words please' }],
    });
    const usages: OpenAI.CompletionUsage[] = [];
    let lastChoices = -1;
    for await (const chunk of stream) {
      if (chunk.usage) usages.push(chunk.usage);
      lastChoices = chunk.choices.length;
    }
    const reported = anthropic.reported.at(-1)!;
    expect(usages).toEqual([
      {
        prompt_tokens: reported.promptTokens,
        completion_tokens: reported.completionTokens,
        total_tokens: reported.promptTokens + reported.completionTokens,
      },
    ]);
    expect(lastChoices).toBe(0);
  });

  it('a dead key disables the channel and the call goes to the next channel', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    await harness.app.ctx.options.set('RetryTimes', '1');
    const dead = await addClaude({ name: 'claude-dead', key: CLAUDE.deadKey, priority: 10 });
    const good = await addClaude({ name: 'claude-good' });
    const before = await harness.balances();
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'are you there' }] });
    expect(completion.choices[0].message.content).toBe('Hello from Anthropic, you said: are you there');
    const rows = await harness.app.ctx.db.selectFrom('channels').select(['id', 'status', 'auto_disabled']).orderBy('id').execute();
    expect(rows.map((row) => [row.id, Number(row.status), Number(row.auto_disabled)])).toEqual([
      [dead, 2, 1],
      [good, 1, 0],
    ]);
    const reported = anthropic.reported.at(-1)!;
    await expectBilled(harness, before, good, MODEL, charge(reported.promptTokens, reported.completionTokens), {
      prompt_tokens: reported.promptTokens,
    });
  });

  it("a refusal of the client's request goes back in OpenAI's shape with the vendor's message, and costs nothing", async () => {
    await addClaude();
    const before = await harness.balances();
    // two system prompts and no user turn: Anthropic refuses a conversation without a user turn
    const error = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'assistant', content: 'I start' }] }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it("a vendor error event in the stream reaches the client in OpenAI's shape, never as a clean end", async () => {
    await addClaude();
    const response = await harness.post('/v1/chat/completions', {
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: 'fail please [stream_error]' }],
    });
    const text = await response.text();
    if (response.status === 200) {
      // the error came after the first word reached the client: the stream ends with an error event, no [DONE]
      expect(text).toMatch(
        /data: \{"error":\{"message":"[^"]*request id [^"]+","type":"server_error","param":null,"code":"upstream_error"\}\}\n\n$/,
      );
      expect(text).not.toContain('[DONE]');
    } else {
      // the error came with the first word, before anything was sent: the channel's failure, answered as one
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(JSON.parse(text)).toMatchObject({ error: { type: 'server_error', code: 'upstream_error' } });
    }
    expect(text).not.toContain(CLAUDE.key);
  });

  it('a client that leaves mid-stream pays for what it was sent, and the vendor stream is closed', async () => {
    const channelId = await harness.addChannel({
      type: CLAUDE.type,
      name: 'claude-slow',
      key: CLAUDE.key,
      base_url: slowAnthropic.baseUrl,
      models: MODEL,
    });
    const before = await harness.balances();
    const reportedBefore = slowAnthropic.reported.length;
    const question = 'please say a rather long sentence back to me so that it takes a while to stream';
    const messages = [{ role: 'user' as const, content: question }];
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, messages }, { signal: controller.signal });
    let received = '';
    let words = 0;
    await (async () => {
      for await (const chunk of stream) {
        received += chunk.choices[0]?.delta?.content ?? '';
        if (chunk.choices[0]?.delta?.content) words += 1;
        if (words === 3) controller.abort();
      }
    })().catch(() => undefined);
    expect(words).toBe(3);
    // the vendor would take ~2.4 s more to finish: it never does, the gateway closed the call
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(slowAnthropic.reported.length).toBe(reportedBefore);
    const log = await (async () => {
      await harness.settled();
      return lastLog();
    })();
    const fullAnswer = `Hello from Anthropic, you said: ${question}`;
    expect(log.prompt_tokens).toBe(countChatPromptTokens(messages, MODEL));
    // billed by count: at least what the client read, far less than the whole answer
    expect(log.completion_tokens).toBeGreaterThanOrEqual(countTextTokens(received, MODEL));
    expect(log.completion_tokens).toBeLessThan(countTextTokens(fullAnswer, MODEL));
    await expectBilled(harness, before, channelId, MODEL, charge(log.prompt_tokens, log.completion_tokens), { is_stream: 1 });
  });

  it('passes a channel without embeddings by, and says so when no other channel can answer', async () => {
    await addClaude({ models: `${MODEL},text-embedding-ada-002`, priority: 10 });
    const alone = await client.embeddings.create({ model: 'text-embedding-ada-002', input: 'alpha' }).then(
      () => undefined,
      (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
    );
    expect(alone?.status).toBe(501);
    expect(alone?.message).toMatch(/does not offer embeddings/);
    const openai = await harness.addChannel({ name: 'openai', key: 'sk-good', models: 'text-embedding-ada-002' });
    const before = await harness.balances();
    const embeddings = await client.embeddings.create({ model: 'text-embedding-ada-002', input: ['alpha beta', 'gamma'] });
    expect(embeddings.data).toHaveLength(2);
    const after = await harness.balances();
    expect(before.user.quota - after.user.quota).toBe(
      computeQuota({ promptTokens: 3, completionTokens: 0, ratio: defaultModelRatio('text-embedding-ada-002'), completionRatio: 1 }),
    );
    expect((await lastLog()).channel_id).toBe(openai);
  });
});
