// Every own-protocol channel type through dispatch and translate.ts: for each
// channel an emulator serves, the openai SDK's chat (plain and streamed) and,
// where the vendor has them, embeddings, each billed exactly what the
// emulator reported.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cachedPromptRatioFor, completionRatioFor, computeQuota, lookupPrice } from '../../../server/relay/billing';
import { countInputTokens } from '../../../server/relay/tokenCount';
import { ALI_CHANNELS, startAliEmulator } from '../../support/emulators/ali';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator } from '../../support/emulators/anthropic';
import { BAIDU_CHANNELS, startBaiduEmulator } from '../../support/emulators/baidu';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { EmulatedChannel, ProtocolEmulator } from '../../support/emulators/types';
import { startXunfeiEmulator, XUNFEI_CHANNELS } from '../../support/emulators/xunfei';
import { startZhipuEmulator, ZHIPU_CHANNELS } from '../../support/emulators/zhipu';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

const VENDORS: Array<{ name: string; start: () => Promise<ProtocolEmulator>; channels: EmulatedChannel[] }> = [
  { name: 'anthropic', start: startAnthropicEmulator, channels: ANTHROPIC_CHANNELS },
  { name: 'gemini', start: startGeminiEmulator, channels: GEMINI_CHANNELS },
  { name: 'baidu', start: startBaiduEmulator, channels: BAIDU_CHANNELS },
  { name: 'zhipu', start: startZhipuEmulator, channels: ZHIPU_CHANNELS },
  { name: 'ali', start: startAliEmulator, channels: ALI_CHANNELS },
  { name: 'xunfei', start: startXunfeiEmulator, channels: XUNFEI_CHANNELS },
];

let harness: RelayHarness;
let client: OpenAI;
const emulators = new Map<string, ProtocolEmulator>();

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  for (const vendor of VENDORS) emulators.set(vendor.name, await vendor.start());
  // this suite is about relaying and exact bills, not the price table: a model the defaults leave
  // unpriced or free gets a price here (the lead's report lists them)
  const ratios = harness.app.ctx.options.json('ModelRatio') as Record<string, number>;
  const models = VENDORS.flatMap((vendor) => vendor.channels.flatMap((channel) => [channel.chatModel, channel.embeddingModel ?? '']).filter(Boolean));
  UNPRICED.push(...models.filter((model) => !(ratios[model] > 0)));
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...ratios, ...Object.fromEntries(UNPRICED.map((model) => [model, 1])) }));
});
/** Emulated models the default ModelRatio leaves unpriced or free. */
const UNPRICED: string[] = [];
afterAll(async () => {
  if (UNPRICED.length) console.info(`[translatedEveryType] priced for this suite only: ${UNPRICED.join(', ')}`);
  await harness.close();
  for (const emulator of emulators.values()) await emulator.close();
});
beforeEach(() => resetRelay(harness));

async function expectBill(before: Awaited<ReturnType<RelayHarness['balances']>>, channelId: number, model: string, emulator: ProtocolEmulator, localCount?: () => number) {
  let reported = emulator.reported.at(-1)!;
  if (reported.promptTokens + reported.completionTokens === 0 && localCount) {
    // the vendor reports no usage for this call (Gemini's embeddings): the relay counts the input itself
    reported = { promptTokens: localCount(), completionTokens: 0, cachedPromptTokens: 0 };
  }
  const price = lookupPrice(model, 'default', harness.app.ctx.options.json('ModelRatio'), harness.app.ctx.options.json('GroupRatio'));
  if (!price.known) throw new Error(price.reason);
  const charge = computeQuota({
    promptTokens: reported.promptTokens,
    completionTokens: reported.completionTokens,
    cachedPromptTokens: reported.cachedPromptTokens,
    cachedPromptRatio: cachedPromptRatioFor(model),
    ratio: price.ratio,
    completionRatio: completionRatioFor(model),
  });
  expect(charge).toBeGreaterThan(0);
  const after = await harness.balances();
  expect(before.user.quota - after.user.quota).toBe(charge);
  expect(before.token.remain_quota - after.token.remain_quota).toBe(charge);
  const log = await harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
  expect(log).toMatchObject({ channel_id: channelId, quota: charge, prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
}

for (const vendor of VENDORS) {
  for (const channel of vendor.channels) {
    describe(`type ${channel.type} (${vendor.name}) through the gateway`, () => {
      const add = async () => {
        const emulator = emulators.get(vendor.name)!;
        const models = [channel.chatModel, channel.embeddingModel].filter(Boolean).join(',');
        const id = await harness.addChannel({ type: channel.type, name: `${vendor.name}-${channel.type}`, key: channel.key, base_url: channel.baseUrl(emulator), other: channel.other, models });
        return { id, emulator };
      };

      it('chat, plain', async () => {
        const { id, emulator } = await add();
        const before = await harness.balances();
        const completion = await client.chat.completions.create({ model: channel.chatModel, messages: [{ role: 'user', content: 'hello gateway friend' }] });
        expect(completion.object).toBe('chat.completion');
        expect(completion.choices[0].message.content).toContain('hello gateway friend');
        await expectBill(before, id, channel.chatModel, emulator);
      });

      it('chat, streamed', async () => {
        const { id, emulator } = await add();
        const before = await harness.balances();
        const stream = await client.chat.completions.create({ model: channel.chatModel, stream: true, messages: [{ role: 'user', content: 'stream these words' }] });
        let text = '';
        let finishes = 0;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          if (chunk.choices[0]?.finish_reason) finishes += 1;
        }
        expect(text).toContain('stream these words');
        expect(finishes).toBe(1);
        await expectBill(before, id, channel.chatModel, emulator);
      });

      if (channel.embeddingModel) {
        it('embeddings', async () => {
          const { id, emulator } = await add();
          const before = await harness.balances();
          const input = ['alpha beta', 'gamma'];
          const embeddings = await client.embeddings.create({ model: channel.embeddingModel!, input });
          expect(embeddings.data).toHaveLength(2);
          await expectBill(before, id, channel.embeddingModel!, emulator, () => countInputTokens(input, channel.embeddingModel!));
        });
      }
    });
  }
}
