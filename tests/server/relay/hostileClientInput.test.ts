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
/** Served by an OpenAI (type 1) channel: the one that takes /v1/responses as bytes. */
const GPT_RESPONSES = 'gpt-4o';

let harness: RelayHarness;
let anthropic: AnthropicEmulator;
let gemini: ProtocolEmulator;

beforeAll(async () => {
  harness = await startRelayHarness();
  anthropic = await startAnthropicEmulator();
  gemini = await startGeminiEmulator();
  await harness.addChannel({ name: 'openai', key: 'sk-good', models: GPT });
  await harness.addChannel({
    type: CLAUDE.type,
    name: 'claude',
    key: CLAUDE.key,
    base_url: CLAUDE.baseUrl(anthropic),
    models: CLAUDE.chatModel,
  });
  await harness.addChannel({
    type: GEMINI.type,
    name: 'gemini',
    key: GEMINI.key,
    base_url: GEMINI.baseUrl(gemini),
    models: GEMINI.chatModel,
  });
  await harness.addChannel({ type: 1, name: 'openai-own', key: 'sk-good', base_url: harness.emulator.baseUrl, models: GPT_RESPONSES });
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
  'messages of nulls, numbers and a numeric content': (model) => ({
    model,
    max_tokens: 10,
    messages: [null, 5, { role: 'user', content: 7 }],
  }),
  'blocks of unknown types and an image without data': (model) => ({
    model,
    max_tokens: 10,
    messages: [
      { role: 'user', content: [{ type: 'hologram' }, { type: 'image', source: { type: 'base64' } }, { type: 'text', text: 'hi' }] },
    ],
  }),
  'tools that are not tools, and a tool_choice string': (model) => ({
    model,
    max_tokens: 10,
    tools: [null, { name: 5 }, 'x'],
    tool_choice: 'any',
    messages: [{ role: 'user', content: 'hi' }],
  }),
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
    messages: [
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'nope', is_error: true, content: [{ type: 'text', text: 'boom' }, { type: 'image' }] },
        ],
      },
    ],
  }),
  'max_tokens of a trillion': (model) => ({ model, max_tokens: 1e12, messages: [{ role: 'user', content: 'hi' }] }),
  'max_tokens negative, fractional and a string': (model) => ({ model, max_tokens: '-1.5', messages: [{ role: 'user', content: 'hi' }] }),
  'a model that is an object': () => ({ model: { name: GPT }, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
};

async function ledger() {
  await harness.settled();
  const { db } = harness.app.ctx;
  const user = await db
    .selectFrom('users')
    .select(['quota', 'used_quota', 'held_quota'])
    .where('username', '=', 'root')
    .executeTakeFirstOrThrow();
  const token = await db
    .selectFrom('tokens')
    .select(['remain_quota', 'held_quota'])
    .where('id', '=', harness.tokenId)
    .executeTakeFirstOrThrow();
  const logged = await db
    .selectFrom('logs')
    .select((eb) => eb.fn.sum<number>('quota').as('charged'))
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return { user, token, charged: Number(logged.charged ?? 0) };
}

describe('hostile bodies on /v1/messages', () => {
  for (const [channel, model] of MODELS) {
    for (const [name, body] of Object.entries(MESSAGES_BODIES)) {
      it(`${name}, to ${channel}: answered without a 5xx, in Anthropic's shape when refused; streamed too`, async () => {
        for (const stream of [false, true]) {
          const sent = body(model) as Record<string, unknown>;
          const response = await harness.post('/v1/messages', stream ? { ...sent, stream } : sent, harness.apiKey, {
            'anthropic-version': '2023-06-01',
          });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status >= 400) {
            expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
          }
        }
      });
    }
  }
});

/** Every way a Responses or Gemini request goes: passed as bytes, or translated to each other vendor. */
const ALL_MODELS = [...MODELS, ['an OpenAI (type 1) channel, passthrough for Responses', GPT_RESPONSES]] as const;

const RESPONSES_BODIES: Record<string, (model: string) => unknown> = {
  'input as a number': (model) => ({ model, input: 42 }),
  'input items of nulls, numbers, unknown types and a message with numeric content': (model) => ({
    model,
    input: [null, 7, { type: 'hologram' }, { type: 'message', role: 'user', content: 5 }],
  }),
  'a function_call_output for a call never made, and a function_call without arguments': (model) => ({
    model,
    input: [
      { type: 'function_call', call_id: 'c1', name: 'f' },
      { type: 'function_call_output', call_id: 'nope', output: { nested: true } },
      { role: 'user', content: 'hi' },
    ],
  }),
  'tools that are not tools, a tool_choice object of nothing': (model) => ({
    model,
    input: 'hi',
    tools: [null, { type: 'function' }, 'x', { type: 'function', name: 5 }],
    tool_choice: { type: 'nothing' },
  }),
  'instructions as an array, reasoning as a word, text.format of an unknown type': (model) => ({
    model,
    input: 'hi',
    instructions: ['a'],
    reasoning: 'deep',
    text: { format: { type: 'yaml' } },
  }),
  'an image part without a URL and a file part': (model) => ({
    model,
    input: [{ role: 'user', content: [{ type: 'input_image' }, { type: 'input_file', file_id: 'f' }, { type: 'input_text', text: 'hi' }] }],
  }),
  'max_output_tokens of a trillion, negative and a string': (model) => ({ model, input: 'hi', max_output_tokens: '-1e12' }),
  previous_response_id: (model) => ({ model, input: 'hi', previous_response_id: 'resp_1' }),
};

const GEMINI_BODIES: Record<string, unknown> = {
  'contents as a string': { contents: 'hello' },
  'contents of nulls, numbers and parts that are not parts': {
    contents: [null, 5, { role: 'user', parts: 'hi' }, { role: 'user', parts: [null, 7, { hologram: true }] }],
  },
  'a functionResponse for a call never made, inlineData without data': {
    contents: [
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'f', response: 'x' } }, { inlineData: { mimeType: 'image/png' } }, { text: 'hi' }],
      },
    ],
  },
  'tools that are not tools, a toolConfig of nothing': {
    contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    tools: [null, { functionDeclarations: 'x' }, { functionDeclarations: [null, { name: 5 }] }],
    toolConfig: { functionCallingConfig: { mode: 7 } },
  },
  'generationConfig of wrong types: maxOutputTokens a trillion, stopSequences a string': {
    contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    generationConfig: { maxOutputTokens: 1e12, stopSequences: 'END', temperature: 'hot', thinkingConfig: 'yes' },
  },
  'a systemInstruction that is a number': { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: 42 },
};

describe('hostile bodies on /v1/responses', () => {
  for (const [channel, model] of ALL_MODELS) {
    for (const [name, body] of Object.entries(RESPONSES_BODIES)) {
      it(`${name}, to ${channel}: answered without a 5xx, in OpenAI's error shape when refused; streamed too`, async () => {
        for (const stream of [false, true]) {
          const sent = body(model) as Record<string, unknown>;
          const response = await harness.post('/v1/responses', stream ? { ...sent, stream } : sent);
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status >= 400) expect(JSON.parse(text)).toMatchObject({ error: { message: expect.any(String) } });
        }
      });
    }
  }
});

describe('hostile bodies and paths on the Gemini native API', () => {
  const call = (path: string, body: unknown) =>
    fetch(`${harness.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': harness.apiKey },
      body: JSON.stringify(body),
    });
  for (const [channel, model] of ALL_MODELS) {
    for (const [name, body] of Object.entries(GEMINI_BODIES)) {
      it(`${name}, to ${channel}: answered without a 5xx, in Google's error shape when refused; streamed too`, async () => {
        for (const method of ['generateContent', 'streamGenerateContent?alt=sse']) {
          const response = await call(`/v1beta/models/${model}:${method}`, body);
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status >= 400)
            expect(JSON.parse(text)).toMatchObject({
              error: { code: response.status, message: expect.any(String), status: expect.any(String) },
            });
        }
      });
    }
  }

  it("refuses hostile model paths in Google's shape without a 5xx", async () => {
    const body = GEMINI_BODIES['a systemInstruction that is a number'];
    for (const path of [
      '/v1beta/models/:generateContent',
      '/v1beta/models/gpt-4',
      `/v1beta/models/${'x'.repeat(5000)}:generateContent`,
      '/v1beta/models/..%2F..%2Fapi%2Fuser:generateContent',
      '/v1beta/models/gpt-4:deleteEverything',
      '/v1beta/models/gpt-4:streamGenerateContent',
    ]) {
      const response = await call(path, body);
      const text = await response.text();
      expect(response.status, `${path}: ${text}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${path}: ${text}`).toBeLessThan(500);
      expect(JSON.parse(text)).toMatchObject({ error: { message: expect.any(String) } });
    }
  });
});

describe('the ledger after every hostile body', () => {
  it('leaves the ledger whole: balances moved by what the logs charged, nothing held', async () => {
    const after = await ledger();
    expect(after.user.held_quota).toBe(0);
    expect(after.token.held_quota).toBe(0);
    expect(after.user.used_quota).toBe(after.charged);
    expect(10_000_000 - after.token.remain_quota).toBe(after.charged);
  });
});
