// The OpenAI-compatible vendors of one-api's later types (360, Tencent Hunyuan,
// Baichuan, MiniMax, 01.AI, StepFun, Cloudflare, Doubao, Novita, Qianfan v2,
// Spark v2, Bailian, Gemini's OpenAI endpoint): each channel, created through
// the channel API with the emulator as its base URL, relays a chat whole and
// streamed with the type's own first default model, and the emulator records
// the path under the type's prefix and the key as a bearer token.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findChannelType, type ChannelType } from '../../../common/channelTypes';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

/** The types this change adds, by one-api's numbers. */
const NEW_TYPES = [19, 23, 26, 27, 31, 32, 37, 40, 41, 47, 48, 49, 51];

/** The path each type's chat goes to, written out rather than derived from the row. */
const CHAT_PATHS: Record<number, string> = {
  19: '/v1/chat/completions',
  23: '/v1/chat/completions',
  26: '/v1/chat/completions',
  27: '/v1/chat/completions',
  31: '/v1/chat/completions',
  32: '/v1/chat/completions',
  37: '/client/v4/accounts/acct%2F1/ai/v1/chat/completions',
  40: '/api/v3/chat/completions',
  41: '/v3/openai/chat/completions',
  47: '/v2/chat/completions',
  48: '/v1/chat/completions',
  49: '/compatible-mode/v1/chat/completions',
  51: '/v1beta/openai/chat/completions',
};

/** Cloudflare's account id, with a character the path must escape. */
const ACCOUNT = 'acct/1';

let harness: RelayHarness;
let client: OpenAI;

const rowOf = (value: number): ChannelType => {
  const row = findChannelType(value);
  if (!row) throw new Error(`no row for type ${value}`);
  return row;
};

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  // the vendors' own models are priced by an operator; 1 each is enough to see them billed
  const prices = Object.fromEntries(NEW_TYPES.map((value) => [rowOf(value).defaultModels[0], 1]));
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, ...prices }));
});
afterAll(() => harness.close());
beforeEach(() => resetRelay(harness));

async function channelFor(type: ChannelType, fields: Record<string, unknown> = {}) {
  return harness.addChannel({
    name: `type-${type.value}`,
    type: type.value,
    key: 'sk-good',
    models: type.defaultModels[0],
    other: type.value === 37 ? ACCOUNT : '',
    ...fields,
  });
}

function lastRequest() {
  return harness.emulator.requests.at(-1)!;
}

describe.each(NEW_TYPES.map((value) => [`${value} ${rowOf(value).label}`, rowOf(value)] as const))('channel type %s', (_name, type) => {
  const model = type.defaultModels[0];

  it('is an OpenAI-wire row with a default base URL, its default models and its owner', () => {
    expect(type).toMatchObject({ protocol: 'openai', baseUrlRequired: false });
    expect(type.defaultBaseUrl).toMatch(/^https:\/\/[^/]+$/);
    expect(type.defaultModels.length).toBeGreaterThan(0);
    expect(type.ownedBy).not.toBe('custom');
  });

  it('relays a chat to its path with the key as a bearer token, and bills it', async () => {
    const channelId = await channelFor(type);
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there vendor' }] });
    expect(completion.choices[0].message.content).toBeTruthy();
    const request = lastRequest();
    expect(request.path).toBe(CHAT_PATHS[type.value]);
    expect(request.headers.authorization).toBe('Bearer sk-good');
    expect((request.body as { model: string }).model).toBe(model);
    await harness.settled();
    const log = await harness.app.ctx.db
      .selectFrom('logs')
      .selectAll()
      .where('type', '=', 2)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ model_name: model, channel_id: channelId, is_stream: 0, prompt_tokens: completion.usage?.prompt_tokens });
    expect(log.quota).toBeGreaterThan(0);
  });

  it('relays a streamed chat to the same path', async () => {
    const channelId = await channelFor(type);
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: 'user', content: 'stream a greeting' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    const request = lastRequest();
    expect(request.path).toBe(CHAT_PATHS[type.value]);
    expect(request.headers.authorization).toBe('Bearer sk-good');
    expect(request.body).toMatchObject({ model, stream: true });
    await harness.settled();
    const log = await harness.app.ctx.db
      .selectFrom('logs')
      .selectAll()
      .where('type', '=', 2)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ model_name: model, channel_id: channelId, is_stream: 1 });
  });
});

describe("Cloudflare's account id", () => {
  const cloudflare = rowOf(37);
  const model = cloudflare.defaultModels[0];

  it('is refused on save when neither `other` nor the base URL holds it', async () => {
    const refused = await harness.admin('POST', '/api/channel/', {
      name: 'cf',
      type: 37,
      key: 'sk-good',
      base_url: harness.emulator.baseUrl,
      models: model,
      group: 'default',
      other: '',
    });
    expect(refused).toMatchObject({
      success: false,
      message: 'this channel type needs its account id (other), or a base URL that holds it',
    });
  });

  it("comes from a base URL with its own path, followed by OpenAI's /v1 paths", async () => {
    await channelFor(cloudflare, { other: '', base_url: `${harness.emulator.baseUrl}/client/v4/accounts/in-url/ai` });
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(lastRequest().path).toBe('/client/v4/accounts/in-url/ai/v1/chat/completions');
  });

  it('missing on a stored channel (an import without it) fails clearly, without calling the vendor', async () => {
    const channelId = await channelFor(cloudflare);
    await harness.app.ctx.db.updateTable('channels').set({ other: '' }).where('id', '=', channelId).execute();
    const before = harness.emulator.requests.length;
    const answer = await harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
    // the client is told the upstream failed (its details stay with the operator); the error log names the cause
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(harness.emulator.requests.length).toBe(before);
    await harness.settled();
    const listed = await harness.admin('GET', '/api/log/?type=5');
    expect(listed.data[0].channel_id).toBe(channelId);
    expect(JSON.stringify(listed.data[0].details)).toContain('this channel has no account id (other)');
  });
});
