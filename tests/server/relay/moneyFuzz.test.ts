// An adversarial generator for the hold: hostile request bodies for every
// inbound protocol (chat, completions, embeddings, Anthropic Messages, OpenAI
// Responses, Gemini, rerank, image generations, speech, transcriptions; the
// realtime frames have theirs in realtimeFuzz.test.ts), built from a grammar
// of what their schemas allow plus unknown fields, numbers written with
// thousands of digits, deep nesting, objects whose `type` names a media kind
// but that carry text, and WAV headers that lie. Each goes through the real
// gateway to the size-honest upstream (tests/support/emulators/sizeHonest.ts:
// every string, key and number billed by what it received, images and audio
// by the vendor's formula, every candidate at its full limit), and:
// - each answered request, as the upstream billed it (prompt tokens; rerank
//   tokens; speech characters and tokens; images; whisper seconds), is at
//   most what the relay held for (the relay's own bound functions);
// - a key with a small balance, sent a burst of them at once, never goes
//   below zero, holds nothing afterwards, and its logs add up to its spend.
// MONEY_FUZZ_RUNS sets the cases per protocol (`npm run fuzz:money` runs
// thousands); MONEY_FUZZ_SEED explores other inputs. Every counterexample ever
// found is kept in REGRESSIONS and runs first.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextWindowFor } from '../../../server/billing/catalog';
import { IMAGE_SIZE_RATIO } from '../../../server/billing/prices';
import { audioDuration } from '../../../server/protocols/inbound/audioDuration';
import { batchSize, promptBound } from '../../../server/protocols/inbound/promptBound';
import { readRerankRequest, rerankTokenBound } from '../../../server/protocols/inbound/rerank';
import { billedSeconds, speechHold, transcriptionPromptTokens } from '../../../server/routes/v1/audio';
import { multipartForm, wav } from '../../support/audioFiles';
import { startSizeHonestUpstream, type SizeHonestUpstream } from '../../support/emulators/sizeHonest';
import { HugeNumber, hostileJson, hostileObject, hostileValue, text } from '../../support/hostileJson';
import { addSizeHonestChannels, HONEST_MODEL_RATIO, loggedSpend, startRelayHarness, type RelayHarness } from './harness';

const RUNS = Number(process.env.MONEY_FUZZ_RUNS ?? 200);
const SEED = Number(process.env.MONEY_FUZZ_SEED ?? 20261129);

/** Unknown fields beside the known ones: the vendor may read any of them. */
const extras = fc.dictionary(
  fc
    .string({ minLength: 1, maxLength: 16 })
    .filter(
      (key) =>
        !['model', 'stream', 'n', 'best_of', 'max_tokens', 'max_output_tokens', 'max_completion_tokens', 'stream_options'].includes(key),
    ),
  hostileValue,
  { maxKeys: 3 },
);

const functionTool = fc.record({
  type: fc.constant('function'),
  function: fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), description: text, parameters: hostileValue }),
});
const chatContent = fc.oneof(text, fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text }), hostileValue), { maxLength: 4 }));
const chatMessage = fc.record(
  { role: fc.constantFrom('system', 'user', 'assistant'), content: chatContent, extra: hostileValue },
  { requiredKeys: ['role', 'content'] },
);

interface Case {
  path: string;
  model: string;
  /** The JSON body; for a multipart upload, the form's text fields. */
  body: Record<string, unknown>;
  /** A multipart upload's file (its fields are `body`). */
  file?: Buffer;
}

/** A PCM WAV that may lie: its data chunk's size and its byte-rate field as a hostile client sets them. */
const hostileWav = fc
  .record({
    seconds: fc.double({ min: 0, max: 8, noNaN: true }),
    rate: fc.constantFrom(8000, 16000),
    channels: fc.constantFrom(1, 2),
    declared: fc.option(fc.oneof(fc.constantFrom(0, 0xffffffff, 1), fc.nat({ max: 2_000_000 })), { nil: undefined }),
    byteRate: fc.option(fc.nat({ max: 0xffffffff }), { nil: undefined }),
  })
  .map(({ seconds, rate, channels, declared, byteRate }) => {
    const file = wav(seconds, rate, channels, declared);
    if (byteRate !== undefined) file.writeUInt32LE(byteRate, 28);
    return file;
  });

const merged = (body: Record<string, unknown>, extra: Record<string, unknown>) => ({ ...extra, ...body });

const PROTOCOLS: Record<string, fc.Arbitrary<Case>> = {
  chat: fc
    .tuple(
      fc.array(chatMessage, { minLength: 1, maxLength: 4 }),
      fc.array(functionTool, { maxLength: 2 }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 3 }),
      extras,
    )
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
      fc.oneof(
        text,
        fc.array(fc.record({ type: fc.constant('text'), text, cache_control: hostileValue }, { requiredKeys: ['type', 'text'] }), {
          maxLength: 3,
        }),
      ),
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
      fc.oneof(
        text,
        fc.array(fc.oneof(fc.record({ role: fc.constantFrom('user', 'developer'), content: chatContent }), hostileValue), {
          minLength: 1,
          maxLength: 3,
        }),
      ),
      text,
      fc.array(
        fc.record({
          type: fc.constant('function'),
          name: fc.stringMatching(/^[a-z_]{1,20}$/),
          description: text,
          parameters: hostileValue,
        }),
        { maxLength: 2 },
      ),
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
      fc.array(
        fc.record({
          role: fc.constantFrom('user', 'model'),
          parts: fc.array(fc.oneof(fc.record({ text }), hostileObject), { minLength: 1, maxLength: 3 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      fc.option(fc.record({ parts: fc.array(fc.record({ text }), { maxLength: 2 }) }), { nil: undefined }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 3 }),
      extras,
    )
    .map(([contents, systemInstruction, limit, candidates, extra]) => ({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      model: 'gemini-2.5-flash',
      body: merged(
        {
          contents,
          ...(systemInstruction ? { systemInstruction } : {}),
          generationConfig: { maxOutputTokens: limit, candidateCount: candidates },
        },
        extra,
      ),
    })),
};

/** Text fields of a hostile form or body: any text, or text that is a JSON document of any shape. */
const formText = fc.oneof(
  text,
  hostileValue.map((value) => hostileJson(value)),
);

const MORE_PROTOCOLS: Record<string, fc.Arbitrary<Case>> = {
  rerank: fc
    .tuple(
      text.filter((query) => query !== ''),
      fc.array(fc.oneof(text, fc.record({ text })), { minLength: 1, maxLength: 12 }),
      fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
      extras.map((extra) =>
        Object.fromEntries(
          Object.entries(extra).filter(([key]) => !['query', 'documents', 'top_n', 'top_k', 'return_documents'].includes(key)),
        ),
      ),
    )
    .map(([query, documents, top, extra]) => ({
      path: '/v1/rerank',
      model: 'jina-reranker-v2-base-multilingual',
      body: merged({ model: 'jina-reranker-v2-base-multilingual', query, documents, ...(top ? { top_n: top } : {}) }, extra),
    })),
  speech: fc
    .tuple(
      fc.constantFrom('tts-1', 'gpt-4o-mini-tts'),
      text.filter((input) => input !== ''),
      fc.option(formText, { nil: undefined }),
      extras,
    )
    .map(([model, input, instructions, extra]) => ({
      path: '/v1/audio/speech',
      model,
      body: merged({ model, input, voice: 'alloy', ...(instructions !== undefined ? { instructions } : {}) }, extra),
    })),
  images: fc
    .tuple(
      text.filter((prompt) => prompt !== ''),
      fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: hostileValue }),
      fc.option(fc.constantFrom(...Object.keys(IMAGE_SIZE_RATIO)), { nil: undefined }),
      extras,
    )
    .map(([prompt, n, size, extra]) => ({
      path: '/v1/images/generations',
      model: 'dall-e-2',
      body: merged({ model: 'dall-e-2', prompt, n, ...(size ? { size } : {}) }, extra),
    })),
  transcriptions: fc
    .tuple(
      fc.constantFrom('whisper-1', 'gpt-4o-transcribe'),
      hostileWav,
      fc.dictionary(
        fc.constantFrom('prompt', 'language', 'temperature', 'response_format', 'chunking_strategy', 'include', 'extra'),
        formText,
        { maxKeys: 3 },
      ),
    )
    .map(([model, file, fields]) => ({ path: '/v1/audio/transcriptions', model, body: { ...fields, model }, file })),
};

/** Counterexamples the generator found on the way (each was a debt before its fix), replayed first every run. */
const REGRESSIONS: Array<{ name: string; protocol: string; case: Case }> = [
  {
    name: 'a 3,000-digit number in a tool schema',
    protocol: 'chat',
    case: {
      path: '/v1/chat/completions',
      model: 'gpt-4o',
      body: {
        model: 'gpt-4o',
        max_tokens: 1,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: { default: new HugeNumber(3000) } } }],
      },
    },
  },
  {
    name: 'a message typed input_audio carrying its text',
    protocol: 'chat',
    case: {
      path: '/v1/chat/completions',
      model: 'gpt-4o',
      body: { model: 'gpt-4o', max_tokens: 1, messages: [{ role: 'user', type: 'input_audio', content: 'y'.repeat(5000) }] },
    },
  },
  {
    name: 'a rerank option every pair carries (Jina-shaped vendors read an `instruction` with each document)',
    protocol: 'rerank',
    case: {
      path: '/v1/rerank',
      model: 'jina-reranker-v2-base-multilingual',
      body: { model: 'jina-reranker-v2-base-multilingual', query: 'q', documents: ['a', 'b', 'c', 'd'], instruction: 'z'.repeat(6000) },
    },
  },
  {
    name: "gpt-4o-mini-tts's instructions beside a one-character input",
    protocol: 'speech',
    case: {
      path: '/v1/audio/speech',
      model: 'gpt-4o-mini-tts',
      body: { model: 'gpt-4o-mini-tts', input: 'a', voice: 'alloy', instructions: 'speak '.repeat(2000) },
    },
  },
  {
    name: 'a Gemini audio part whose data is text, not base64 (it was priced as audio, a token per 16 characters)',
    protocol: 'gemini',
    case: {
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      model: 'gemini-2.5-flash',
      body: {
        contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: '\u{10ffff}'.repeat(3000) } }] }],
        generationConfig: { maxOutputTokens: 1 },
      },
    },
  },
  {
    name: 'a key that tokenizes a token a byte, and the separator a vendor writes beside it (the hold was one short per key)',
    protocol: 'speech',
    case: {
      path: '/v1/audio/speech',
      model: 'gpt-4o-mini-tts',
      body: { '2qD': '7<1%', model: 'gpt-4o-mini-tts', input: 'x'.repeat(5800), voice: 'alloy' },
    },
  },
  {
    name: 'best_of beyond n',
    protocol: 'completions',
    case: {
      path: '/v1/completions',
      model: 'gpt-3.5-turbo-instruct',
      body: { model: 'gpt-3.5-turbo-instruct', prompt: 'go', max_tokens: 64, best_of: 5 },
    },
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
});
afterAll(async () => {
  await harness?.close();
  await upstream?.close();
});

/** The key the generated bodies are sent with: unlimited, on an account topped up for the run (thousands of cases spend millions). */
let fuzzKey = '';

/** A case's request body: its JSON as a hostile client writes it, or its multipart form. */
function requestOf(entry: Case): { body: string | Buffer; contentType: string } {
  if (!entry.file) return { body: hostileJson(entry.body), contentType: 'application/json' };
  return multipartForm(Object.fromEntries(Object.entries(entry.body).map(([name, value]) => [name, String(value)])), entry.file);
}

const post = (entry: Case, key = fuzzKey) => {
  const { body, contentType } = requestOf(entry);
  return fetch(`${harness.baseUrl}${entry.path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: `Bearer ${key}`, 'x-goog-api-key': key },
    body,
  });
};

/** What the relay held for, in the unit the upstream bills (`upstream.reported`): the same bound functions, over the body as the relay read it. */
function heldPrompt(entry: Case): number {
  if (entry.file) {
    const upload = requestOf(entry).body as Buffer;
    const seconds = audioDuration(entry.file).seconds;
    // whisper: the seconds held; the others: the prompt held (the audio's tokens and the form)
    return entry.model.startsWith('whisper')
      ? billedSeconds(seconds)
      : transcriptionPromptTokens(entry.model, { seconds, formBytes: upload.length - entry.file.length });
  }
  const parsed = JSON.parse(hostileJson(entry.body)) as Record<string, unknown>;
  if (entry.path === '/v1/rerank') {
    const read = readRerankRequest(parsed, entry.model);
    return 'request' in read ? rerankTokenBound(read.request) : 0;
  }
  if (entry.path === '/v1/audio/speech') {
    const held = speechHold(parsed as Record<string, unknown> & { input: string }, entry.model);
    return held.characters + held.optionsBound;
  }
  if (entry.path === '/v1/images/generations') return typeof parsed.n === 'number' ? parsed.n : 1;
  const prompts = entry.path.endsWith('/embeddings')
    ? batchSize(parsed.input)
    : entry.path.endsWith('/v1/completions')
      ? batchSize(parsed.prompt)
      : 1;
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

  it("regression: speech holds and bills gpt-4o-mini-tts's instructions, not only the input's characters", async () => {
    const body = { model: 'gpt-4o-mini-tts', input: 'a', voice: 'alloy', instructions: 'speak calmly. '.repeat(800) };
    // a key that pays for the character but not for the instructions is refused before any call
    const small = await harness.admin('POST', '/api/token/', { name: 'speech small', remain_quota: 50 });
    const before = upstream.reported.length;
    const refused = await post({ path: '/v1/audio/speech', model: body.model, body }, `sk-${small.data.key}`);
    expect(refused.status, await refused.text()).toBe(429);
    expect(upstream.reported.length).toBe(before);
    // answered on a key that pays: the bill counts the instructions' tokens (11,200 bytes, a few thousand tokens)
    const paid = await harness.admin('POST', '/api/token/', { name: 'speech paid', remain_quota: 100_000 });
    const answered = await post({ path: '/v1/audio/speech', model: body.model, body }, `sk-${paid.data.key}`);
    expect(answered.status).toBe(200);
    await answered.arrayBuffer();
    await harness.settled();
    const spent = await loggedSpend(harness, paid.data.id);
    expect(spent).toBeGreaterThan(1000 * HONEST_MODEL_RATIO['gpt-4o-mini-tts']);
    expect(spent).toBeLessThanOrEqual(
      Math.ceil(heldPrompt({ path: '/v1/audio/speech', model: body.model, body }) * HONEST_MODEL_RATIO['gpt-4o-mini-tts']),
    );
  });

  for (const [protocol, arbitrary] of Object.entries({ ...PROTOCOLS, ...MORE_PROTOCOLS })) {
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
      console.log(
        `money fuzz, ${protocol}: ${RUNS} cases (${answered} answered, the rest refused before any call) in ${((performance.now() - started) / 1000).toFixed(1)} s, seed ${SEED}`,
      );
      // the generator must reach the upstream, or it proves nothing about the bills
      expect(answered).toBeGreaterThan(RUNS / 10);
    }, 600_000);

    it(`${protocol}: a burst of generated bodies on a small balance never takes the key below zero`, async () => {
      const created = await harness.admin('POST', '/api/token/', { name: `fuzz ${protocol}`, remain_quota: 20_000 });
      const key = `sk-${created.data.key}`;
      const burst = fc.sample(arbitrary, { seed: SEED + 1, numRuns: 24 });
      await Promise.all(burst.map((entry) => post(entry, key).then((response) => response.text())));
      await harness.settled();
      const token = await harness.app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', created.data.id)
        .executeTakeFirstOrThrow();
      const logged = await loggedSpend(harness, created.data.id);
      expect(Number(token.remain_quota)).toBeGreaterThanOrEqual(0);
      expect(Number(token.held_quota)).toBe(0);
      expect(20_000 - logged).toBe(Number(token.remain_quota));
    }, 120_000);
  }
});
