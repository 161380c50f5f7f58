// Hostile and malformed bodies in every client protocol, to channels that pass
// them through and channels that translate them: each is answered (a 4xx in
// the client's protocol, or an answer), never a 500 or a dropped connection,
// and the ledger holds after all of them: the balances moved by exactly what
// the consume logs charged, and nothing is left held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { ProtocolEmulator } from '../../support/emulators/types';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';
import { startRelayHarness, type RelayHarness } from './harness';

const CLAUDE = ANTHROPIC_CHANNELS[0];
const GEMINI = GEMINI_CHANNELS[0];
const GPT = 'gpt-4';

let harness: RelayHarness;
let anthropic: AnthropicEmulator;
let gemini: ProtocolEmulator;

beforeAll(async () => {
  harness = await startRelayHarness();
  anthropic = await startAnthropicEmulator();
  gemini = await startGeminiEmulator();
  await harness.addChannel({ name: 'openai', key: 'sk-good', models: GPT });
  await harness.addChannel({ type: CLAUDE.type, name: 'claude', key: CLAUDE.key, base_url: CLAUDE.baseUrl(anthropic), models: CLAUDE.chatModel });
  await harness.addChannel({ type: GEMINI.type, name: 'gemini', key: GEMINI.key, base_url: GEMINI.baseUrl(gemini), models: GEMINI.chatModel });
});
afterAll(async () => {
  await harness.close();
  await anthropic.close();
  await gemini.close();
});

/** A model per channel: the body goes through each way the gateway has for it. */
const MODELS = [
  ['an OpenAI channel', GPT],
  ['an Anthropic channel', CLAUDE.chatModel],
  ['a Gemini channel', GEMINI.chatModel],
] as const;

/** Bodies no client should send, with the model filled in per channel. */
const MESSAGES_BODIES: Record<string, (model: string) => unknown> = {
  'messages as a string': (model) => ({ model, max_tokens: 10, messages: 'hello' }),
  'messages of nulls, numbers and a numeric content': (model) => ({ model, max_tokens: 10, messages: [null, 5, { role: 'user', content: 7 }] }),
  'blocks of unknown types and an image without data': (model) => ({
    model,
    max_tokens: 10,
    messages: [{ role: 'user', content: [{ type: 'hologram' }, { type: 'image', source: { type: 'base64' } }, { type: 'text', text: 'hi' }] }],
  }),
  'tools that are not tools, and a tool_choice string': (model) => ({ model, max_tokens: 10, tools: [null, { name: 5 }, 'x'], tool_choice: 'any', messages: [{ role: 'user', content: 'hi' }] }),
  'a numeric system, stop_sequences as a string, thinking as a word, metadata null': (model) => ({
    model,
    max_tokens: 10,
    system: 42,
    stop_sequences: 'END',
    thinking: 'yes',
    metadata: null,
    messages: [{ role: 'user', content: 'hi' }],
  }),
  'a tool_result for a call never made, with an error flag and nested blocks': (model) => ({
    model,
    max_tokens: 10,
    messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', is_error: true, content: [{ type: 'text', text: 'boom' }, { type: 'image' }] }] }],
  }),
  'max_tokens of a trillion': (model) => ({ model, max_tokens: 1e12, messages: [{ role: 'user', content: 'hi' }] }),
  'max_tokens negative, fractional and a string': (model) => ({ model, max_tokens: '-1.5', messages: [{ role: 'user', content: 'hi' }] }),
  'a model that is an object': () => ({ model: { name: GPT }, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
};

async function ledger() {
  await harness.settled();
  const { db } = harness.app.ctx;
  const user = await db.selectFrom('users').select(['quota', 'used_quota', 'held_quota']).where('username', '=', 'root').executeTakeFirstOrThrow();
  const token = await db.selectFrom('tokens').select(['remain_quota', 'held_quota']).where('id', '=', harness.tokenId).executeTakeFirstOrThrow();
  const logged = await db.selectFrom('logs').select((eb) => eb.fn.sum<number>('quota').as('charged')).where('type', '=', 2).executeTakeFirstOrThrow();
  return { user, token, charged: Number(logged.charged ?? 0) };
}

describe('hostile bodies on /v1/messages', () => {
  for (const [channel, model] of MODELS) {
    for (const [name, body] of Object.entries(MESSAGES_BODIES)) {
      it(`${name}, to ${channel}: answered without a 5xx, in Anthropic's shape when refused; streamed too`, async () => {
        for (const stream of [false, true]) {
          const sent = body(model) as Record<string, unknown>;
          const response = await harness.post('/v1/messages', stream ? { ...sent, stream } : sent, harness.apiKey, { 'anthropic-version': '2023-06-01' });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status >= 400) {
            expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
          }
        }
      });
    }
  }

  it('leaves the ledger whole: balances moved by what the logs charged, nothing held', async () => {
    const after = await ledger();
    expect(after.user.held_quota).toBe(0);
    expect(after.token.held_quota).toBe(0);
    expect(after.user.used_quota).toBe(after.charged);
    expect(10_000_000 - after.token.remain_quota).toBe(after.charged);
  });
});
