// Every model the console pre-fills for a channel type must have a price on a
// fresh install: from the catalog packages or the built-in ModelRatio table.
// A model with neither would be refused (model_price_unset) the first time a
// client asks for it, on a channel the console itself set up.
import { beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, type ChannelType } from '../../common/channelTypes';
import { DEFAULT_GROUP_RATIO, DEFAULT_MODEL_RATIO, OPTION_SPECS } from '../../common/options';
import { catalogModelNames, catalogPrice } from '../../server/billing/catalog';
import { computeQuota, defaultModelPrice, lookupPrice } from '../../server/billing/prices';
import { useRelayHarness, type RelayHarness } from './relay/harness';

/** `<type> <label>: <model>` for each default model no default price covers. */
function unpricedDefaults(types: readonly Pick<ChannelType, 'value' | 'label' | 'defaultModels'>[]): string[] {
  return types.flatMap((type) =>
    type.defaultModels
      .filter((model) => defaultModelPrice(model, DEFAULT_MODEL_RATIO).model_ratio === undefined)
      .map((model) => `${type.value} ${type.label}: ${model}`),
  );
}

describe("the channel types' default models", () => {
  it('all have a price on a fresh install', () => {
    expect(unpricedDefaults(CHANNEL_TYPES)).toEqual([]);
    for (const type of CHANNEL_TYPES) {
      for (const model of type.defaultModels)
        expect(lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO), `${type.value}: ${model}`).toMatchObject({
          known: true,
        });
    }
  });

  it('would name a type added without prices, model by model', () => {
    const added = { value: 99, label: 'Acme', defaultModels: ['acme-chat-1', 'gpt-5', 'acme-embed-1'] };
    expect(unpricedDefaults([...CHANNEL_TYPES, added])).toEqual(['99 Acme: acme-chat-1', '99 Acme: acme-embed-1']);
  });

  it('are listed once per type, without blanks', () => {
    for (const type of CHANNEL_TYPES) {
      expect(new Set(type.defaultModels).size, `${type.value}`).toBe(type.defaultModels.length);
      for (const model of type.defaultModels) expect(model.trim(), `${type.value}`).toBe(model);
    }
  });
});

/** The vendors' published prices per million tokens, input and output, as the tests expect them to be billed. */
const yuan = (input: number, output: number) => ({ ratio: input / 14, completionRatio: output / input });
const dollars = (input: number, output: number) => ({ ratio: input / 2, completionRatio: output / input });

describe('the built-in prices of the vendors the catalogs lack', () => {
  it.each([
    ['hunyuan-t1-latest', yuan(1, 4)],
    ['step-1-32k', yuan(15, 70)],
    ['Baichuan4-Turbo', yuan(15, 15)],
    ['doubao-1-5-pro-32k-250115', yuan(0.8, 2)],
    ['ernie-4.5-turbo-128k', yuan(0.8, 3.2)],
    ['360gpt-turbo', yuan(1.2, 1.2)],
    ['openai/gpt-oss-120b', dollars(0.15, 0.6)],
    // served by Together at $1.25 both ways and by SiliconFlow at ¥2 / ¥8: the higher of each
    ['deepseek-ai/DeepSeek-V3', dollars(1.25, 1.25)],
  ] as const)('prices %s as its vendor does', (model, expected) => {
    const price = lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
    expect(price.known).toBe(true);
    if (!price.known) return;
    expect(price.source).toBe('option');
    expect(price.ratio).toBeCloseTo(expected.ratio, 6);
    expect(price.completionRatio).toBeCloseTo(expected.completionRatio, 6);
  });

  it('prices a local Ollama model and the free tiers at 0, which is a price', () => {
    for (const model of ['llama3.2', 'hunyuan-lite', 'ernie-speed-128k']) {
      expect(lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO), model).toMatchObject({ known: true, ratio: 0 });
    }
  });
});

describe("the catalog's model list", () => {
  it('holds no fine-tune prefix rule, while a real fine-tune name is still priced', () => {
    const names = catalogModelNames();
    expect(names).not.toContain('gpt-4o-mini-2024-07-18.ft-');
    expect(names).not.toContain('ft:gpt-3.5-turbo-');
    expect(names.filter((name) => /[-.:_/@]$/.test(name) || /(^|[.:])ft[-:]/.test(name))).toEqual([]);
    // the rules still price the names a client's fine-tunes carry
    expect(catalogPrice('gpt-4o-mini-2024-07-18.ft-acme-123')).toBeDefined();
    expect(catalogPrice('ft:gpt-3.5-turbo-0125:acme::abc123')).toBeDefined();
    expect(names).toEqual(expect.arrayContaining(['gpt-4o-mini', 'gpt-5', 'claude-sonnet-4-5']));
    expect(new Set(names).size).toBe(names.length);
  });
});

// The emulator counts one token per word of the prompt and answers `chunks` completion tokens.
describe('default prices through the relay', () => {
  const relay = useRelayHarness();
  let harness: RelayHarness;
  beforeEach(async () => {
    harness = relay();
    for (const key of ['ModelRatio', 'CompletionRatio'] as const) await harness.app.ctx.options.set(key, OPTION_SPECS[key].default);
  });

  const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');

  async function chargeOf(model: string): Promise<number> {
    await harness.addChannel({ name: `for-${model}`, key: 'sk-good', models: model });
    const before = await harness.balances();
    const response = await harness.post('/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: words(1000) }],
      emulator: { chunks: 50 },
    });
    expect(response.status, model).toBe(200);
    const body = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 50 });
    const after = await harness.balances();
    return before.user.quota - after.user.quota;
  }

  /** 1000 prompt and 50 completion tokens at the vendor's price. */
  it.each([
    ['hunyuan-t1-latest', yuan(1, 4), 85], // (1000 + 50 x 4) / 14 = 85.7
    ['step-1-32k', yuan(15, 70), 1321], // (1000 + floor(50 x 70/15)) x 15/14 = 1233 x 1.0714 = 1321.1
    ['openai/gpt-oss-120b', dollars(0.15, 0.6), 90], // (1000 + 200) x 0.075
    ['deepseek-ai/DeepSeek-V3', dollars(1.25, 1.25), 656], // 1050 x 0.625 = 656.25
  ] as const)('bills %s on a fresh install at its vendor price', async (model, price, billed) => {
    expect(computeQuota({ promptTokens: 1000, completionTokens: 50, ...price })).toBe(billed);
    expect(await chargeOf(model)).toBe(billed);
  });

  it('relays a free model without a charge', async () => {
    expect(await chargeOf('hunyuan-lite')).toBe(0);
  });

  it("lists no fine-tune prefix rule in the settings' price table or the channel form's model list, and every type's defaults in both", async () => {
    const defaults = ((await harness.admin('GET', '/api/pricing/defaults')) as { data: Array<{ model: string; model_ratio?: number }> })
      .data;
    const listed = ((await harness.admin('GET', '/api/channel/models')) as { data: Array<{ id: string }> }).data.map((model) => model.id);
    for (const names of [defaults.map((row) => row.model), listed]) {
      expect(names).not.toContain('gpt-4o-mini-2024-07-18.ft-');
      expect(names).not.toContain('ft:gpt-3.5-turbo-');
      expect(new Set(names).size).toBe(names.length);
    }
    const priced = new Map(defaults.map((row) => [row.model, row.model_ratio]));
    const missing = CHANNEL_TYPES.flatMap((type) =>
      type.defaultModels
        .filter((model) => priced.get(model) === undefined || !listed.includes(model))
        .map((model) => `${type.value}: ${model}`),
    );
    expect(missing).toEqual([]);
  });
});
