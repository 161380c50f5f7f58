// An adversarial generator for the hold: hostile request bodies for every
// text protocol (chat, completions, embeddings, Anthropic Messages, OpenAI
// Responses, Gemini), built from a grammar of what their schemas allow plus
// unknown fields, numbers written with thousands of digits, deep nesting, and
// objects whose `type` names a media kind but that carry text. Each goes
// through the real gateway to the size-honest upstream
// (tests/support/emulators/sizeHonest.ts: every string, key and number
// billed by what it received, images and audio by the vendor's formula, every
// candidate at its full limit), and:
// - each answered request's prompt, as the upstream billed it, is at most the
//   prompt's bound the relay held for (promptBound, as the relay computes it);
// - a key with a small balance, sent a burst of them at once, never goes
//   below zero, holds nothing afterwards, and its logs add up to its spend.
// MONEY_FUZZ_RUNS sets the cases per protocol (`npm run fuzz:money` runs
// thousands); MONEY_FUZZ_SEED explores other inputs. Every counterexample ever
// found is kept in REGRESSIONS and runs first.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextWindowFor } from '../../../server/billing/catalog';
import { batchSize, promptBound } from '../../../server/protocols/inbound/promptBound';
import { startSizeHonestUpstream, type SizeHonestUpstream } from '../../support/emulators/sizeHonest';
import { addSizeHonestChannels, loggedSpend, startRelayHarness, type RelayHarness } from './harness';

const RUNS = Number(process.env.MONEY_FUZZ_RUNS ?? 200);
const SEED = Number(process.env.MONEY_FUZZ_SEED ?? 20261129);

/** A number written with this many digits: JSON.parse reads it as Infinity (or 0), the wire carries every digit. */
class HugeNumber {
  constructor(readonly digits: number) {}
}

/** JSON with every HugeNumber written out digit by digit (the form a hostile client sends). */
function hostileJson(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (!(item instanceof HugeNumber)) return item;
    marks.push('9'.repeat(item.digits));
    return `\u0000huge${marks.length - 1}\u0000`;
  });
  return text.replace(/"\\u0000huge(\d+)\\u0000"/g, (_match, index: string) => marks[Number(index)]);
}

const MEDIA_TYPES = ['input_audio', 'image_url', 'input_image', 'file', 'input_file', 'image', 'document', 'audio', 'video'];

/** Text of every size a prompt field takes, up to a few kilobytes, in any script. */
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 400 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 500, maxLength: 4000 }) },
  { weight: 1, arbitrary: fc.nat({ max: 6000 }).map((length) => 'x'.repeat(length)) },
);

/** Any JSON a client can put anywhere: scalars, huge numbers, media-typed objects with text, nesting. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.integer({ min: 20, max: 3000 }).map((digits) => new HugeNumber(digits)),
    fc.record({ type: fc.constantFrom(...MEDIA_TYPES), text, description: text, extra: tie('value') }, { requiredKeys: ['type'] }),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** Unknown fields beside the known ones: the vendor may read any of them. */
const extras = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 16 }).filter((key) => !['model', 'stream', 'n', 'best_of', 'max_tokens', 'max_output_tokens', 'max_completion_tokens', 'stream_options'].includes(key)),
  hostileValue,
  { maxKeys: 3 },
);

const functionTool = fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), description: text, parameters: hostileValue }) });
const chatContent = fc.oneof(text, fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text }), hostileValue), { maxLength: 4 }));
const chatMessage = fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: chatContent, extra: hostileValue }, { requiredKeys: ['role', 'content'] });

interface Case {
  path: string;
  model: string;
  body: Record<string, unknown>;
}

const merged = (body: Record<string, unknown>, extra: Record<string, unknown>) => ({ ...extra, ...body });

const PROTOCOLS: Record<string, fc.Arbitrary<Case>> = {
  chat: fc
    .tuple(fc.array(chatMessage, { minLength: 1, maxLength: 4 }), fc.array(functionTool, { maxLength: 2 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 3 }), extras)
    .map(([messages, tools, limit, n, extra]) => ({
      path: '/v1/chat/completions',
      model: 'gpt-4o',
      body: merged({ model: 'gpt-4o', messages, ...(tools.length ? { tools } : {}), max_tokens: limit, n }, extra),
    })),
  completions: fc
    .tuple(
      fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 }), fc.array(fc.nat({ max: 100_000 }), { minLength: 1, maxLength: 400 })),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 5 }),
      extras,
    )
    .map(([prompt, limit, bestOf, extra]) => ({
      path: '/v1/completions',
      model: 'gpt-3.5-turbo-instruct',
      body: merged({ model: 'gpt-3.5-turbo-instruct', prompt, max_tokens: limit, best_of: bestOf }, extra),
    })),
  embeddings: fc.tuple(fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 4 })), extras).map(([input, extra]) => ({
    path: '/v1/embeddings',
    model: 'text-embedding-3-small',
    body: merged({ model: 'text-embedding-3-small', input }, extra),
  })),
  messages: fc
    .tuple(
      fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text, cache_control: hostileValue }, { requiredKeys: ['type', 'text'] }), { maxLength: 3 })),
      fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: chatContent }), { minLength: 1, maxLength: 3 }),
      fc.array(fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), description: text, input_schema: hostileValue }), { maxLength: 2 }),
      fc.integer({ min: 1, max: 64 }),
      extras,
    )
    .map(([system, messages, tools, limit, extra]) => ({
      path: '/v1/messages',
      model: 'claude-sonnet-4-5',
      body: merged({ model: 'claude-sonnet-4-5', system, messages, ...(tools.length ? { tools } : {}), max_tokens: limit }, extra),
    })),
  responses: fc
    .tuple(
      fc.oneof(text, fc.array(fc.oneof(fc.record({ role: fc.constantFrom('user', 'developer'), content: chatContent }), hostileValue), { minLength: 1, maxLength: 3 })),
      text,
      fc.array(fc.record({ type: fc.constant('function'), name: fc.stringMatching(/^[a-z_]{1,20}$/), description: text, parameters: hostileValue }), { maxLength: 2 }),
      fc.integer({ min: 16, max: 64 }),
      extras,
    )
    .map(([input, instructions, tools, limit, extra]) => ({
      path: '/v1/responses',
      model: 'gpt-4o',
      body: merged({ model: 'gpt-4o', input, instructions, ...(tools.length ? { tools } : {}), max_output_tokens: limit }, extra),
    })),
  gemini: fc
    .tuple(
      fc.array(fc.record({ role: fc.constantFrom('user', 'model'), parts: fc.array(fc.oneof(fc.record({ text }), hostileValue), { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 3 }),
      fc.option(fc.record({ parts: fc.array(fc.record({ text }), { maxLength: 2 }) }), { nil: undefined }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 3 }),
      extras,
    )
    .map(([contents, systemInstruction, limit, candidates, extra]) => ({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      model: 'gemini-2.5-flash',
      body: merged({ contents, ...(systemInstruction ? { systemInstruction } : {}), generationConfig: { maxOutputTokens: limit, candidateCount: candidates } }, extra),
    })),
};

/** Counterexamples the generator found on the way (each was a debt before its fix), replayed first every run. */
const REGRESSIONS: Array<{ name: string; protocol: keyof typeof PROTOCOLS; case: Case }> = [
  {
    name: 'a 3,000-digit number in a tool schema',
    protocol: 'chat',
    case: {
      path: '/v1/chat/completions',
      model: 'gpt-4o',
      body: { model: 'gpt-4o', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { default: new HugeNumber(3000) } } }] },
    },
  },
  {
    name: 'a message typed input_audio carrying its text',
    protocol: 'chat',
    case: { path: '/v1/chat/completions', model: 'gpt-4o', body: { model: 'gpt-4o', max_tokens: 1, messages: [{ role: 'user', type: 'input_audio', content: 'y'.repeat(5000) }] } },
  },
  {
    name: 'best_of beyond n',
    protocol: 'completions',
    case: { path: '/v1/completions', model: 'gpt-3.5-turbo-instruct', body: { model: 'gpt-3.5-turbo-instruct', prompt: 'go', max_tokens: 64, best_of: 5 } },
  },
];

let harness: RelayHarness;
let upstream: SizeHonestUpstream;

beforeAll(async () => {
  upstream = await startSizeHonestUpstream();
  harness = await startRelayHarness();
  await addSizeHonestChannels(harness, upstream.baseUrl);
  const topped = await harness.admin('PUT', '/api/user/', { id: 1, username: 'root', display_name: 'Root User', quota: 1e13 });
  expect(topped.success, topped.message).toBe(true);
  const created = await harness.admin('POST', '/api/token/', { name: 'fuzz', unlimited_quota: true });
  expect(created.success, created.message).toBe(true);
  fuzzKey = `sk-${created.data.key}`;
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await upstream?.close();
});

/** The key the generated bodies are sent with: unlimited, on an account topped up for the run (thousands of cases spend millions). */
let fuzzKey = '';

const post = (entry: Case, key = fuzzKey) =>
  fetch(`${harness.baseUrl}${entry.path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-goog-api-key': key }, body: hostileJson(entry.body) });

/** The prompt's bound as the relay holds it: the same walk, over the body as the relay parsed it, each batch input with its own window. */
function heldPrompt(entry: Case): number {
  const parsed = JSON.parse(hostileJson(entry.body)) as Record<string, unknown>;
  const prompts = entry.path.endsWith('/embeddings') ? batchSize(parsed.input) : entry.path.endsWith('/v1/completions') ? batchSize(parsed.prompt) : 1;
  return promptBound(parsed, entry.model, undefined, prompts, contextWindowFor(entry.model));
}

/** Sends one case; when it was answered, the prompt the upstream billed is at most the bound held for it. */
async function checkOne(entry: Case): Promise<void> {
  const before = upstream.reported.length;
  const response = await post(entry);
  await response.text();
  if (response.status !== 200) return;
  expect(upstream.reported.length, 'an answered request reached the upstream once').toBe(before + 1);
  const billed = upstream.reported[before];
  expect(billed, JSON.stringify(entry).slice(0, 300)).toBeLessThanOrEqual(heldPrompt(entry));
}

describe('the hold is an upper bound of every hostile body', () => {
  for (const regression of REGRESSIONS) {
    it(`regression: ${regression.name}`, async () => {
      await checkOne(regression.case);
      // and it is answered: the case is not dodged by a refusal
      const response = await post(regression.case);
      expect(response.status, await response.text()).toBe(200);
    });
  }

  for (const [protocol, arbitrary] of Object.entries(PROTOCOLS)) {
    it(`${protocol}: ${RUNS} generated bodies, each billed within its hold`, async () => {
      const started = performance.now();
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(arbitrary, async (entry) => {
          const before = upstream.reported.length;
          await checkOne(entry);
          if (upstream.reported.length > before) answered += 1;
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      console.log(`money fuzz, ${protocol}: ${RUNS} cases (${answered} answered, the rest refused before any call) in ${((performance.now() - started) / 1000).toFixed(1)} s, seed ${SEED}`);
      // the generator must reach the upstream, or it proves nothing about the bills
      expect(answered).toBeGreaterThan(RUNS / 10);
    }, 600_000);

    it(`${protocol}: a burst of generated bodies on a small balance never takes the key below zero`, async () => {
      const created = await harness.admin('POST', '/api/token/', { name: `fuzz ${protocol}`, remain_quota: 20_000 });
      const key = `sk-${created.data.key}`;
      const burst = fc.sample(arbitrary, { seed: SEED + 1, numRuns: 24 });
      await Promise.all(burst.map((entry) => post(entry, key).then((response) => response.text())));
      await harness.settled();
      const token = await harness.app.ctx.db.selectFrom('tokens').select(['remain_quota', 'held_quota', 'used_quota']).where('id', '=', created.data.id).executeTakeFirstOrThrow();
      const logged = await loggedSpend(harness, created.data.id);
      expect(Number(token.remain_quota)).toBeGreaterThanOrEqual(0);
      expect(Number(token.held_quota)).toBe(0);
      expect(20_000 - logged).toBe(Number(token.remain_quota));
    }, 120_000);
  }
});
