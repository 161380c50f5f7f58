// The vendors with an API of their own beyond the big ones (Coze bots), end
// to end through the gateway against their loopback emulators: what is
// billed, what is refused and what a refusal costs (nothing).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { COZE_CHANNELS, startCozeEmulator } from '../../support/emulators/coze';
import { REPLICATE_CHANNELS, startReplicateEmulator } from '../../support/emulators/replicate';
import { DEEPL_CHANNELS, startDeeplEmulator } from '../../support/emulators/deepl';
import type { ProtocolEmulator } from '../../support/emulators/types';
import { chargeFor, expectBilled, useRelayHarness } from './harness';

const harnessOf = useRelayHarness();
const BOT_MODEL = COZE_CHANNELS[0].chatModel;
const BOT_RATIO = 0.75;

let coze: ProtocolEmulator;
let replicate: ProtocolEmulator;
let deepl: ProtocolEmulator;
beforeAll(async () => {
  coze = await startCozeEmulator();
  replicate = await startReplicateEmulator();
  deepl = await startDeeplEmulator();
});
afterAll(() => Promise.all([coze.close(), replicate.close(), deepl.close()]));

const LLAMA = REPLICATE_CHANNELS[0].chatModel;
const LLAMA_RATIO = 0.025;
// DeepL's $25 per million characters: $0.025 per thousand, 12.5 times the $0.002 of ratio 1
const DEEPL_RATIO = 12.5;
const priced = async () =>
  harnessOf().app.ctx.options.set(
    'ModelRatio',
    JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BOT_MODEL]: BOT_RATIO, [LLAMA]: LLAMA_RATIO, 'deepl-zh': DEEPL_RATIO }),
  );
const client = () => new OpenAI({ apiKey: harnessOf().apiKey, baseURL: `${harnessOf().baseUrl}/v1`, maxRetries: 0 });

describe('Coze channel', () => {
  const addCoze = (key = COZE_CHANNELS[0].key) =>
    harnessOf().addChannel({ name: 'coze', type: 34, key, base_url: coze.baseUrl, models: BOT_MODEL, other: '' });

  it('answers a whole chat from the stream read to its end, with the history, billed at what Coze counted', async () => {
    await priced();
    const channelId = await addCoze();
    const before = await harnessOf().balances();
    const completion = await client().chat.completions.create({
      model: BOT_MODEL,
      user: 'customer-42',
      messages: [
        { role: 'user', content: 'first question here' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'and a second one' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Hello from the Coze bot, you said: and a second one');
    const sent = coze.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${COZE_CHANNELS[0].key}`);
    expect(sent.body).toMatchObject({ bot_id: '7379462189365198898', user_id: 'customer-42', stream: true });
    expect((sent.body as { additional_messages: unknown[] }).additional_messages).toHaveLength(3);
    // 3 + 2 + 4 words in, 11 out
    expect(coze.reported.at(-1)).toEqual({ promptTokens: 9, completionTokens: 11, cachedPromptTokens: 0 });
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 11 });
    const charge = computeQuota({
      promptTokens: 9,
      completionTokens: 11,
      cachedPromptTokens: 0,
      cachedPromptRatio: 1,
      ratio: BOT_RATIO,
      completionRatio: completionRatioFor(BOT_MODEL),
    });
    await harnessOf().settled();
    await expectBilled(harnessOf(), before, channelId, BOT_MODEL, charge, { prompt_tokens: 9, completion_tokens: 11 });
  });

  it('refuses function tools with a clear 400 and bills nothing', async () => {
    await priced();
    await addCoze();
    const before = await harnessOf().balances();
    const asked = coze.requests.length;
    const refused = await harnessOf().post('/v1/chat/completions', {
      model: BOT_MODEL,
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/function tools/);
    expect(coze.requests.length).toBe(asked);
    const after = await harnessOf().balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it("reads Coze's refusal of a revoked token (code 4100 in a 200) as a dead key: the client gets a gateway error, nothing is billed", async () => {
    await priced();
    for (const stream of [false, true]) {
      await harnessOf().app.ctx.db.deleteFrom('abilities').execute();
      await harnessOf().app.ctx.db.deleteFrom('channels').execute();
      const channelId = await addCoze(COZE_CHANNELS[0].deadKey);
      const before = await harnessOf().balances();
      const refused = await harnessOf().post('/v1/chat/completions', {
        model: BOT_MODEL,
        stream,
        messages: [{ role: 'user', content: 'hi' }],
      });
      // the operator's key is not the client's business: the gateway says it was refused, not why
      expect(refused.status).toBe(502);
      const error = ((await refused.json()) as { error: { message: string; code: string } }).error;
      expect(error.code).toBe('upstream_error');
      expect(error.message).not.toContain(COZE_CHANNELS[0].deadKey);
      await harnessOf().settled();
      const after = await harnessOf().balances();
      expect(after.user.quota).toBe(before.user.quota);
      expect(after.token.remain_quota).toBe(before.token.remain_quota);
      const channel = await harnessOf()
        .app.ctx.db.selectFrom('channels')
        .select(['status', 'used_quota'])
        .where('id', '=', channelId)
        .executeTakeFirstOrThrow();
      expect(channel.used_quota).toBe(0);
    }
  });
});

describe('Replicate channel', () => {
  const addReplicate = (key = REPLICATE_CHANNELS[0].key) =>
    harnessOf().addChannel({ name: 'replicate', type: 46, key, base_url: replicate.baseUrl, models: LLAMA, other: '' });

  it('asks for the finished prediction, writes the conversation as one prompt, and bills its metrics', async () => {
    await priced();
    const channelId = await addReplicate();
    const before = await harnessOf().balances();
    const completion = await client().chat.completions.create({
      model: LLAMA,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'be kind' },
        { role: 'user', content: 'one two' },
        { role: 'assistant', content: 'three' },
        { role: 'user', content: 'four five six' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Replicate, you said: four five six');
    const sent = replicate.requests.at(-1)!;
    expect(sent.headers.prefer).toBe('wait=60');
    expect(sent.body).toEqual({
      input: { prompt: 'user: one two\nassistant: three\nuser: four five six\nassistant:', system_prompt: 'be kind', max_tokens: 64 },
    });
    const usage = replicate.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens });
    const charge = computeQuota({ ...usage, cachedPromptRatio: 1, ratio: LLAMA_RATIO, completionRatio: completionRatioFor(LLAMA) });
    await harnessOf().settled();
    await expectBilled(harnessOf(), before, channelId, LLAMA, charge, {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
    });
  });

  it('a revoked token bills nothing and leaves the channel unused', async () => {
    await priced();
    const channelId = await addReplicate(REPLICATE_CHANNELS[0].deadKey);
    const before = await harnessOf().balances();
    const refused = await harnessOf().post('/v1/chat/completions', {
      model: LLAMA,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(refused.status).toBe(502);
    await harnessOf().settled();
    const after = await harnessOf().balances();
    expect(after.user.quota).toBe(before.user.quota);
    const channel = await harnessOf()
      .app.ctx.db.selectFrom('channels')
      .select('used_quota')
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(channel.used_quota).toBe(0);
  });
});

describe('DeepL channel', () => {
  const addDeepl = (key = DEEPL_CHANNELS[0].key) =>
    harnessOf().addChannel({ name: 'deepl', type: 38, key, base_url: deepl.baseUrl, models: 'deepl-zh', other: '' });

  it('translates the last user message, streamed, billed at the characters DeepL billed and nothing for the answer', async () => {
    await priced();
    const channelId = await addDeepl();
    const before = await harnessOf().balances();
    const stream = await client().chat.completions.create({
      model: 'deepl-zh',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'user', content: 'not this one' },
        { role: 'user', content: 'Good morning, café!' },
      ],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('[ZH] Good morning, café!');
    expect(deepl.requests.at(-1)!.body).toEqual({ text: ['Good morning, café!'], target_lang: 'ZH', show_billed_characters: true });
    // 19 characters (é is one, though two bytes)
    expect(usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 0 });
    const charge = computeQuota({
      promptTokens: 19,
      completionTokens: 0,
      cachedPromptTokens: 0,
      cachedPromptRatio: 1,
      ratio: DEEPL_RATIO,
      completionRatio: completionRatioFor('deepl-zh'),
    });
    await harnessOf().settled();
    await expectBilled(harnessOf(), before, channelId, 'deepl-zh', charge, { prompt_tokens: 19, completion_tokens: 0, is_stream: 1 });
  });

  it('an account whose quota is spent (456) bills nothing', async () => {
    await priced();
    await addDeepl(DEEPL_CHANNELS[0].deadKey);
    const before = await harnessOf().balances();
    const refused = await harnessOf().post('/v1/chat/completions', { model: 'deepl-zh', messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(502);
    await harnessOf().settled();
    expect((await harnessOf().balances()).user.quota).toBe(before.user.quota);
  });
});

describe('FastGPT channel', () => {
  it("sends a chat to the deployment's /api/v1/chat/completions with the app's key, billed at the usage it reports", async () => {
    const harness = harnessOf();
    const channelId = await harness.addChannel({
      name: 'fastgpt',
      type: 22,
      key: 'sk-good',
      base_url: `${harness.emulator.baseUrl}/api`,
      models: 'gpt-4o-mini',
      other: '',
    });
    const before = await harness.balances();
    const completion = await client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello fast app' }],
    });
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.path).toBe('/api/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-good');
    // the OpenAI emulator: one token per word of the prompt, five answered
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5 });
    await harness.settled();
    await expectBilled(harness, before, channelId, 'gpt-4o-mini', chargeFor('gpt-4o-mini', { promptTokens: 3, completionTokens: 5 }));
  });
});
