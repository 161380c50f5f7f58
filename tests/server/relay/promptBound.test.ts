// The reservation is an upper bound of what a request can cost, wherever the
// client puts its prompt: tool descriptions, JSON schemas, token-id arrays,
// system blocks, documents, images and audio, on every client protocol. Each
// case puts a large prompt in one part and sends it 64 times at once with a
// key that affords only a few, to an upstream that bills prompts by their size
// as high as a real vendor could (tests/support/emulators/sizeHonest.ts). No
// key may end below zero, nothing may stay held, and the logs must equal the
// charges, on SQLite, PostgreSQL and MySQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchSize, promptBound } from '../../../server/protocols/inbound/promptBound';
import { contextWindowFor } from '../../../server/billing/catalog';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import {
  honestNumberCharacters,
  honestPromptTokens,
  startSizeHonestUpstream,
  type SizeHonestUpstream,
} from '../../support/emulators/sizeHonest';
import { addSizeHonestChannels, loggedSpend, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('prompt bound');

const LONG = 'describe every field of the record in plain words '.repeat(2000); // about 100,000 characters
const IDS = Array.from({ length: 6_000 }, (_, index) => (index * 7919) % 100_000);

/** A PNG whose header says 2048 x 2048, padded to 60 KB (the upstream never decodes it). */
function pngBase64(): string {
  const header = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(2048, 16);
  header.writeUInt32BE(2048, 20);
  return Buffer.concat([header, Buffer.alloc(60_000, 7)]).toString('base64');
}
const PNG = pngBase64();
const AUDIO = Buffer.alloc(300_000, 3).toString('base64');

interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** The model the bound is for (the path's, for Gemini). */
  model: string;
  /** The JSON as sent, when written by hand (`body` is then what it parses to). */
  raw?: string;
}

const tool = {
  type: 'function',
  function: {
    name: 'lookup',
    description: LONG,
    parameters: { type: 'object', properties: { id: { type: 'string', description: LONG.slice(0, 20_000) } } },
  },
};
const hi = [{ role: 'user', content: 'hi' }];

/** A chat body whose tool schema has a number written with 100,000 digits (JSON.parse reads it as Infinity). */
const HUGE_NUMBER_RAW = JSON.stringify({
  model: 'gpt-4o',
  max_tokens: 16,
  messages: hi,
  tools: [
    {
      type: 'function',
      function: { name: 'lookup', description: LONG, parameters: { type: 'object', properties: { id: { type: 'number', default: 0 } } } },
    },
  ],
}).replace('"default":0', `"default":${'9'.repeat(100_000)}`);

const CASES: Case[] = [
  // the review's four new shapes: each ran up a debt before the bound counted it
  {
    name: 'chat: a 100,000-digit number in a tool schema',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    raw: HUGE_NUMBER_RAW,
    body: JSON.parse(HUGE_NUMBER_RAW) as Record<string, unknown>,
  },
  {
    name: 'chat: a schema property typed input_audio with a long description',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_tokens: 16,
      messages: hi,
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', parameters: { type: 'object', properties: { clip: { type: 'input_audio', description: LONG } } } },
        },
      ],
    },
  },
  {
    name: 'chat: a message typed input_audio beside its text',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: { model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', type: 'input_audio', content: LONG }] },
  },
  {
    name: 'completions: best_of 20 candidates',
    path: '/v1/completions',
    model: 'gpt-3.5-turbo-instruct',
    body: { model: 'gpt-3.5-turbo-instruct', max_tokens: 500, best_of: 20, prompt: 'write a long story' },
  },
  {
    name: 'chat: a tool description',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: { model: 'gpt-4o', max_tokens: 16, messages: hi, tools: [tool] },
  },
  {
    name: 'chat: legacy functions',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: { model: 'gpt-4o', max_tokens: 16, messages: hi, functions: [tool.function] },
  },
  {
    name: 'chat: a JSON schema',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_tokens: 16,
      messages: hi,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', description: LONG } } },
    },
  },
  {
    name: 'chat: tool_choice',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: { model: 'gpt-4o', max_tokens: 16, messages: hi, tool_choice: { type: 'function', function: { name: LONG } } },
  },
  {
    name: 'chat: images, inline and linked',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_tokens: 16,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            ...Array.from({ length: 20 }, (_, index) => ({
              type: 'image_url',
              image_url: index % 2 ? { url: 'https://images.example.test/a.png' } : { url: `data:image/png;base64,${PNG}`, detail: 'high' },
            })),
          ],
        },
      ],
    },
  },
  {
    name: 'chat: audio',
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_tokens: 16,
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: AUDIO, format: 'wav' } }] }],
    },
  },
  {
    name: 'completions: token ids',
    path: '/v1/completions',
    model: 'gpt-3.5-turbo-instruct',
    body: { model: 'gpt-3.5-turbo-instruct', max_tokens: 16, prompt: IDS },
  },
  {
    name: 'completions: arrays of token ids',
    path: '/v1/completions',
    model: 'gpt-3.5-turbo-instruct',
    body: { model: 'gpt-3.5-turbo-instruct', max_tokens: 16, prompt: [IDS, IDS] },
  },
  {
    name: 'embeddings: arrays of token ids',
    path: '/v1/embeddings',
    model: 'text-embedding-3-small',
    body: { model: 'text-embedding-3-small', input: [IDS, IDS, IDS] },
  },
  {
    name: 'embeddings: strings',
    path: '/v1/embeddings',
    model: 'text-embedding-3-small',
    body: { model: 'text-embedding-3-small', input: [LONG.slice(0, 20_000), LONG.slice(0, 20_000)] },
  },
  {
    name: 'messages: system blocks, tools, a document, an image',
    path: '/v1/messages',
    model: 'claude-sonnet-4-5',
    body: {
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      system: [{ type: 'text', text: LONG.slice(0, 30_000), cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'lookup', description: LONG.slice(0, 30_000), input_schema: { type: 'object', properties: {} } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: LONG.slice(0, 30_000) } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'text', text: 'summarise' },
          ],
        },
      ],
    },
  },
  {
    name: 'messages to an OpenAI channel: a tool description',
    path: '/v1/messages',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_tokens: 16,
      tools: [{ name: 'lookup', description: LONG, input_schema: { type: 'object', properties: {} } }],
      messages: hi,
    },
  },
  {
    name: 'responses: instructions, items, tools',
    path: '/v1/responses',
    model: 'gpt-4o',
    body: {
      model: 'gpt-4o',
      max_output_tokens: 16,
      instructions: LONG.slice(0, 30_000),
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: LONG.slice(0, 30_000) },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
          ],
        },
      ],
      tools: [{ type: 'function', name: 'lookup', description: LONG.slice(0, 30_000), parameters: { type: 'object', properties: {} } }],
    },
  },
  {
    name: 'gemini: contents, systemInstruction, tools, inline data',
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    model: 'gemini-2.5-flash',
    body: {
      systemInstruction: { parts: [{ text: LONG.slice(0, 30_000) }] },
      tools: [
        { functionDeclarations: [{ name: 'lookup', description: LONG.slice(0, 30_000), parameters: { type: 'OBJECT', properties: {} } }] },
      ],
      contents: [{ role: 'user', parts: [{ text: LONG.slice(0, 30_000) }, { inlineData: { mimeType: 'image/png', data: PNG } }] }],
      generationConfig: { maxOutputTokens: 16 },
    },
  },
  {
    name: 'gemini to an OpenAI channel: a function declaration',
    path: '/v1beta/models/gpt-4o:generateContent',
    model: 'gpt-4o',
    body: {
      tools: [{ functionDeclarations: [{ name: 'lookup', description: LONG, parameters: { type: 'OBJECT', properties: {} } }] }],
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: { maxOutputTokens: 16 },
    },
  },
  // found by the money fuzzer (moneyFuzz.test.ts)
  {
    name: 'rerank: an instruction a Jina-shaped vendor reads with every document',
    path: '/v1/rerank',
    model: 'jina-reranker-v2-base-multilingual',
    body: {
      model: 'jina-reranker-v2-base-multilingual',
      query: 'which',
      documents: Array.from({ length: 100 }, (_, index) => `document ${index}`),
      instruction: LONG,
    },
  },
  {
    name: "speech: gpt-4o-mini-tts's instructions",
    path: '/v1/audio/speech',
    model: 'gpt-4o-mini-tts',
    body: { model: 'gpt-4o-mini-tts', input: 'hi', voice: 'alloy', instructions: LONG },
  },
  {
    name: 'gemini: an audio part whose data is text, not base64',
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    model: 'gemini-2.5-flash',
    body: {
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: '\u00e9'.repeat(50_000) } }] }],
      generationConfig: { maxOutputTokens: 16 },
    },
  },
];

/** The key's budget: enough for a few of these requests, never for 64. */
const BUDGET = 400_000;
/** The small balance of the review that found the hole. */
const SMALL = 3_750;

for (const target of targets) {
  describe.runIf(target.available)(`the reservation bounds every prompt part on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let upstream: SizeHonestUpstream;
    let largestDebt = 0;

    beforeAll(async () => {
      database = await target.create();
      upstream = await startSizeHonestUpstream();
      harness = await startRelayHarness(database.config);
      await addSizeHonestChannels(harness, upstream.baseUrl);
    });
    afterAll(async () => {
      console.log(`prompt bound on ${target.name}: the largest debt any case ran up was ${largestDebt} quota`);
      await harness?.close();
      await upstream?.close();
      await database?.drop();
    });

    const tokenRow = (id: number) =>
      harness.app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    for (const entry of CASES) {
      it(`${entry.name}: 64 at once never take the key below zero`, async () => {
        const created = await harness.admin('POST', '/api/token/', { name: entry.name.slice(0, 30), remain_quota: BUDGET });
        expect(created.success, created.message).toBe(true);
        const key = `sk-${created.data.key}`;
        const before = upstream.reported.length;
        const statuses = await Promise.all(
          Array.from({ length: 64 }, () =>
            harness.post(entry.path, entry.raw ?? entry.body, key).then(async (response) => (await response.text(), response.status)),
          ),
        );
        await harness.settled();
        const served = statuses.filter((status) => status === 200).length;
        // some fit; most are refused for quota before anything is sent when the 64 overlap, but a machine slow enough
        // to take them one after another (CI at half speed did, once) finds each fits by its real, smaller cost. The
        // refusal before sending is the next test's, on a balance below one bound; this one's is the key never below 0.
        expect(served).toBeGreaterThan(0);
        expect(upstream.reported.length - before).toBe(served);
        const token = await tokenRow(created.data.id);
        const logged = await loggedSpend(harness, created.data.id);
        largestDebt = Math.max(largestDebt, -Number(token.remain_quota));
        expect(Number(token.remain_quota)).toBeGreaterThanOrEqual(0);
        expect(Number(token.held_quota)).toBe(0);
        expect(BUDGET - logged).toBe(Number(token.remain_quota));
        expect(Number(token.used_quota)).toBe(logged);
      });

      it(`${entry.name}: a balance of ${SMALL} is refused before anything is sent`, async () => {
        const created = await harness.admin('POST', '/api/token/', { name: `small ${entry.name}`.slice(0, 30), remain_quota: SMALL });
        const before = upstream.reported.length;
        const response = await harness.post(entry.path, entry.raw ?? entry.body, `sk-${created.data.key}`);
        await response.text();
        expect(response.status).not.toBe(200);
        expect(upstream.reported.length).toBe(before);
        const token = await tokenRow(created.data.id);
        expect(Number(token.remain_quota)).toBe(SMALL);
        expect(Number(token.held_quota)).toBe(0);
      });
    }

    it('bounds each passthrough body above what the size-honest upstream bills for the same body', () => {
      const vendorOf = (path: string) => (path.startsWith('/v1/messages') ? 'anthropic' : path.startsWith('/v1beta') ? 'gemini' : 'openai');
      const passthrough = CASES.filter(
        (entry) => (vendorOf(entry.path) === 'openai') === entry.model.startsWith('gpt') || entry.model.startsWith('text-'),
      );
      expect(passthrough.length).toBeGreaterThan(8);
      // as the relay does, each prompt of a batch gets a context window of its own
      const prompts = (body: Record<string, unknown>) => batchSize(body.input ?? body.prompt);
      for (const entry of passthrough) {
        // what goes upstream: the body as JSON prints it (a number written longer than that is never forwarded as written)
        expect(
          promptBound(entry.body, entry.model, undefined, prompts(entry.body), contextWindowFor(entry.model)),
          entry.name,
        ).toBeGreaterThanOrEqual(
          honestPromptTokens(
            entry.body,
            vendorOf(entry.path),
            entry.model,
            honestNumberCharacters(entry.path, entry.body, JSON.stringify(entry.body)),
          ),
        );
      }
    });
  });
}
