// Every channel type the console offers, end to end: the channel is created
// through the channel API pointing at a local emulator of its vendor's wire
// protocol, then the official `openai` SDK calls chat (whole and streamed) and
// embeddings where the vendor has them, and each call is billed exactly what
// the vendor's reported usage costs at the model's default price.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, type ChannelType } from '../../../common/channelTypes';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { cachedPromptRatioFor, completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { countInputTokens, countTextTokens } from '../../../server/protocols/inbound/tokenCount';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator } from '../../support/emulators/anthropic';
import { ALI_CHANNELS, startAliEmulator } from '../../support/emulators/ali';
import { BAIDU_CHANNELS, startBaiduEmulator } from '../../support/emulators/baidu';
import { BEDROCK_CHANNELS, startBedrockEmulator } from '../../support/emulators/bedrock';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { EmulatedChannel, ProtocolEmulator, ReportedUsage } from '../../support/emulators/types';
import { XUNFEI_CHANNELS, startXunfeiEmulator } from '../../support/emulators/xunfei';
import { ZHIPU_CHANNELS, startZhipuEmulator } from '../../support/emulators/zhipu';
import { VERTEX_CHANNELS, startVertexEmulator } from '../../support/emulators/vertex';
import { COZE_CHANNELS, startCozeEmulator } from '../../support/emulators/coze';
import { REPLICATE_CHANNELS, startReplicateEmulator } from '../../support/emulators/replicate';
import { DEEPL_CHANNELS, startDeeplEmulator } from '../../support/emulators/deepl';
import { AIPROXY_LIBRARY_CHANNELS, startAiProxyLibraryEmulator } from '../../support/emulators/aiproxyLibrary';
import { INBOUND_CODECS } from '../../../server/protocols/inbound';
import { countWords } from '../../support/openaiEmulator';
import { defaultModelRatio, resetRelay, startRelayHarness, type RelayHarness } from './harness';

let harness: RelayHarness;
let client: OpenAI;
const vendors: Array<{ emulator: ProtocolEmulator; channels: EmulatedChannel[] }> = [];

const OWN_PROTOCOL_VENDORS = [
  { start: startAnthropicEmulator, channels: ANTHROPIC_CHANNELS },
  { start: startGeminiEmulator, channels: GEMINI_CHANNELS },
  { start: startBaiduEmulator, channels: BAIDU_CHANNELS },
  { start: startAliEmulator, channels: ALI_CHANNELS },
  { start: startZhipuEmulator, channels: ZHIPU_CHANNELS },
  { start: startXunfeiEmulator, channels: XUNFEI_CHANNELS },
  { start: startVertexEmulator, channels: VERTEX_CHANNELS },
  { start: startCozeEmulator, channels: COZE_CHANNELS },
  { start: startReplicateEmulator, channels: REPLICATE_CHANNELS },
  { start: startDeeplEmulator, channels: DEEPL_CHANNELS },
  { start: startAiProxyLibraryEmulator, channels: AIPROXY_LIBRARY_CHANNELS },
  { start: startBedrockEmulator, channels: BEDROCK_CHANNELS },
];

/** The chat and embedding models an OpenAI-wire channel is tested with (priced by default). */
const OPENAI_CHAT_MODEL = 'gpt-4o-mini';
const OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';

/**
 * Prices for the models the emulators serve that have no default price (an
 * operator adds them; Spark sells token packages, Google has no list price for
 * text-embedding-004, a Coze bot is priced by its operator) or are free (glm-4-flash: a free model bills 0, which
 * would prove nothing here).
 */
const TEST_PRICES: Record<string, number> = {
  'text-embedding-004': 0.01,
  'generalv3.5': 1,
  'glm-4-flash': 0.05,
  'bot-7379462189365198898': 0.5,
};
const PRICES = { ...DEFAULT_MODEL_RATIO, ...TEST_PRICES };

interface Case {
  name: string;
  type: ChannelType;
  channel: () => { key: string; base_url: string; other: string };
  chatModel: string;
  embeddingModel?: string;
  /** The usage the upstream reported for the last call. */
  lastUsage: () => ReportedUsage;
  /** The vendor reports no usage: the bill is the gateway's own count of the request and the answer. */
  unmetered?: true;
}

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify(PRICES));
  for (const vendor of OWN_PROTOCOL_VENDORS) vendors.push({ emulator: await vendor.start(), channels: vendor.channels });
});
afterAll(async () => {
  await Promise.all(vendors.map((vendor) => vendor.emulator.close()));
  await harness.close();
});
beforeEach(() => resetRelay(harness));

/** What the OpenAI emulator reported: one token per word of the prompt, `word0 ... word4` answered. */
function openAiUsage(): ReportedUsage {
  const last = harness.emulator.requests.at(-1)!;
  const body = last.body as { messages?: Array<{ content: string }>; input?: unknown };
  const prompt = body.messages ? body.messages.map((message) => message.content).join(' ') : [body.input].flat().join(' ');
  return { promptTokens: countWords(prompt), completionTokens: body.messages ? 5 : 0, cachedPromptTokens: 0 };
}

/** The channels a type is tested with: the OpenAI emulator for the OpenAI wire, else every variant its vendor's emulator serves. */
function casesFor(type: ChannelType): Case[] {
  // a vendor with no chat (Jina, Voyage) is relayed end to end in rerank.test.ts
  if (type.noChat) return [];
  if (type.protocol === 'openai' || type.protocol === 'azure') {
    return [
      {
        name: 'openai wire',
        type,
        // a type that cannot go without `other` (Cloudflare's account id) gets one
        channel: () => ({
          key: 'sk-good',
          base_url: harness.emulator.baseUrl,
          other: type.other?.fallback || (type.other?.required ? 'account-1' : ''),
        }),
        chatModel: OPENAI_CHAT_MODEL,
        embeddingModel: OPENAI_EMBEDDING_MODEL,
        lastUsage: openAiUsage,
      },
    ];
  }
  const vendor = OWN_PROTOCOL_VENDORS.findIndex((candidate) => candidate.channels.some((channel) => channel.type === type.value));
  if (vendor === -1) throw new Error(`no emulator serves channel type ${type.value} (${type.label})`);
  return OWN_PROTOCOL_VENDORS[vendor].channels
    .filter((channel) => channel.type === type.value)
    .map((emulated) => ({
      name: emulated.other ? `other ${emulated.other}` : 'default',
      type,
      channel: () => ({
        key: emulated.keyFor?.(vendors[vendor].emulator) ?? emulated.key,
        base_url: emulated.baseUrl(vendors[vendor].emulator),
        other: emulated.other,
      }),
      chatModel: emulated.chatModel,
      embeddingModel: emulated.embeddingModel,
      lastUsage: () => vendors[vendor].emulator.reported.at(-1)!,
      unmetered: emulated.unmetered,
    }));
}

/** What the gateway counts for a call to a vendor that reports no usage: the request's prompt as the OpenAI codec counts it, the answer by the model's tokenizer. */
function ownCount(body: Record<string, unknown>, answer: string): ReportedUsage {
  const model = body.model as string;
  return {
    promptTokens: INBOUND_CODECS.openai.promptTokens('chat', body, model, {}),
    completionTokens: countTextTokens(answer, model),
    cachedPromptTokens: 0,
  };
}

/** The exact charge for a usage at the model's default price. */
function chargeOf(model: string, usage: ReportedUsage): number {
  const ratio = TEST_PRICES[model] ?? defaultModelRatio(model);
  expect(ratio, `${model} has a default price`).toBeGreaterThan(0);
  return computeQuota({
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    cachedPromptRatio: cachedPromptRatioFor(model),
    ratio,
    completionRatio: completionRatioFor(model),
  });
}

async function lastLog() {
  await harness.settled();
  return harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
}

const CASES = CHANNEL_TYPES.flatMap((type) =>
  casesFor(type).map((testCase) => [`${type.value} ${type.label} (${testCase.name})`, testCase] as const),
);

describe.each(CASES)('channel type %s', (_name, testCase) => {
  const { type } = testCase;
  let channelId: number;

  beforeEach(async () => {
    const models = [testCase.chatModel, testCase.embeddingModel].filter(Boolean).join(',');
    channelId = await harness.addChannel({ name: `type-${type.value}`, type: type.value, models, ...testCase.channel() });
  });

  it('relays a chat completion and bills the vendor-reported usage exactly', async () => {
    const before = await harness.balances();
    const body = {
      model: testCase.chatModel,
      messages: [
        { role: 'system' as const, content: 'be brief' },
        { role: 'user' as const, content: 'say hello to the gateway' },
      ],
    };
    const completion = await client.chat.completions.create(body);
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toBeTruthy();
    expect(completion.choices[0].message.content).toBeTruthy();
    expect(completion.choices[0].finish_reason).toBe('stop');
    const usage = testCase.unmetered ? ownCount(body, completion.choices[0].message.content!) : testCase.lastUsage();
    expect(completion.usage?.prompt_tokens).toBe(usage.promptTokens);
    expect(completion.usage?.completion_tokens).toBe(usage.completionTokens);
    const charge = chargeOf(testCase.chatModel, usage);
    const log = await lastLog();
    expect(log).toMatchObject({
      model_name: testCase.chatModel,
      quota: charge,
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      channel_id: channelId,
      is_stream: 0,
    });
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota - charge);
    expect(after.token.remain_quota).toBe(before.token.remain_quota - charge);
  });

  it('relays a streamed chat completion with usage and bills it exactly', async () => {
    const before = await harness.balances();
    const body = {
      model: testCase.chatModel,
      stream: true as const,
      stream_options: { include_usage: true },
      messages: [{ role: 'user' as const, content: 'stream me a greeting please' }],
    };
    const stream = await client.chat.completions.create(body);
    let text = '';
    let finishes = 0;
    let reported: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      for (const choice of chunk.choices) {
        expect(choice.index).toBe(0);
        text += choice.delta.content ?? '';
        if (choice.finish_reason) finishes += 1;
      }
      if (chunk.usage) reported = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finishes).toBe(1);
    const usage = testCase.unmetered ? ownCount(body, text) : testCase.lastUsage();
    expect(reported?.prompt_tokens).toBe(usage.promptTokens);
    expect(reported?.completion_tokens).toBe(usage.completionTokens);
    const charge = chargeOf(testCase.chatModel, usage);
    expect(await lastLog()).toMatchObject({
      quota: charge,
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      is_stream: 1,
      channel_id: channelId,
    });
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota - charge);
  });

  it('relays embeddings where the vendor has them, else refuses them clearly', async () => {
    const adaptor = UPSTREAM_ADAPTORS[type.protocol];
    if (!adaptor.operations.has('embeddings')) {
      expect(testCase.embeddingModel).toBeUndefined();
      const refused = await harness.post('/v1/embeddings', { model: testCase.chatModel, input: 'x' });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/embeddings|no channel|not/i);
      return;
    }
    // a variant of a vendor with embeddings may have none of its own (Zhipu's old v3 API)
    if (!testCase.embeddingModel) return;
    const before = await harness.balances();
    const result = await client.embeddings.create({ model: testCase.embeddingModel, input: ['first text here', 'second one'] });
    expect(result.data).toHaveLength(2);
    expect(result.data[1].index).toBe(1);
    expect(result.data[0].embedding.length).toBeGreaterThan(0);
    expect(result.data[0].embedding.every(Number.isFinite)).toBe(true);
    const reported = testCase.lastUsage();
    // a vendor that reports no usage for embeddings (Gemini) is billed the relay's own count of the input
    const usage =
      reported.promptTokens > 0
        ? reported
        : { ...reported, promptTokens: countInputTokens(['first text here', 'second one'], testCase.embeddingModel, {}) };
    const charge = chargeOf(testCase.embeddingModel, usage);
    expect(await lastLog()).toMatchObject({
      model_name: testCase.embeddingModel,
      quota: charge,
      prompt_tokens: usage.promptTokens,
      channel_id: channelId,
    });
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota - charge);
  });
});
