// POST /v1/rerank end to end: a real gateway on loopback, channels created
// through the channel API and pointed at rerank emulators of each vendor's
// shape (Cohere, Jina, SiliconFlow, Voyage, and a Custom channel of Jina's
// shape). Each call is billed exactly from what the emulated vendor reported
// (tokens x the model's ratio, or Cohere's search units x floor(ratio x 1000))
// and logged; a vendor's 4xx is not retried, its 5xx is retried on the next
// channel; bad input and a model the key may not use are refused with nothing
// charged and no vendor called.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { computeQuota, searchUnitQuota } from '../../../server/billing/prices';
import { RERANK_GOOD_KEY, startRerankEmulator, type RerankEmulator, type RerankShape } from '../../support/emulators/rerank';
import { BEDROCK_ACCESS_KEY, BEDROCK_CHANNELS, startBedrockEmulator, type BedrockEmulator } from '../../support/emulators/bedrock';
import { expectBilled, lastConsumeLog, resetRelay, startRelayHarness, type RelayHarness } from './harness';

let harness: RelayHarness;
let bedrock: BedrockEmulator;
const emulators = {} as Record<RerankShape, RerankEmulator>;

/** A model a SiliconFlow or Custom channel serves, priced by the operator (the catalog has no price for it). */
const BGE = 'BAAI/bge-reranker-v2-m3';
const BGE_RATIO = 0.02;

const QUERY = 'organic skincare for sensitive skin';
const DOCUMENTS = [
  'New makeup trends focus on bold colors',
  'Organic skincare for sensitive skin with aloe vera',
  { text: 'Gentle skincare for sensitive skin' },
];
const TEXTS = DOCUMENTS.map((document) => (typeof document === 'string' ? document : document.text));

/** The tokens every emulator counts for QUERY and DOCUMENTS: the query's words once per document, and every document's words. */
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean).length;
const TOKENS = words(QUERY) * TEXTS.length + TEXTS.reduce((sum, text) => sum + words(text), 0);

const tokenCharge = (tokens: number, ratio: number) =>
  computeQuota({ promptTokens: tokens, completionTokens: 0, ratio, completionRatio: 1 });

beforeAll(async () => {
  harness = await startRelayHarness();
  for (const shape of ['cohere', 'jina', 'siliconflow', 'voyage'] as const) emulators[shape] = await startRerankEmulator(shape);
  bedrock = await startBedrockEmulator();
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BGE]: BGE_RATIO }));
});
afterAll(async () => {
  await harness.close();
  for (const emulator of Object.values(emulators)) await emulator.close();
  await bedrock.close();
});
beforeEach(async () => {
  await resetRelay(harness);
  for (const emulator of Object.values(emulators)) emulator.requests.length = 0;
});

function addRerankChannel(type: number, emulator: RerankEmulator, model: string, fields: Record<string, unknown> = {}): Promise<number> {
  return harness.addChannel({
    name: `rerank-${type}-${emulator.shape}`,
    type,
    key: RERANK_GOOD_KEY,
    base_url: emulator.baseUrl,
    models: model,
    ...fields,
  });
}

async function rerank(body: Record<string, unknown>, key?: string) {
  const response = await harness.post('/v1/rerank', body, key);
  return { status: response.status, body: (await response.json()) as any };
}

describe('each vendor', () => {
  it('Jina (type 52): Jina-shaped request, results with their documents, billed by the tokens Jina counted', async () => {
    const model = 'jina-reranker-v2-base-multilingual';
    const channelId = await addRerankChannel(52, emulators.jina, model);
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS, top_n: 2 });
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([
      { index: 1, relevance_score: expect.any(Number), document: { text: TEXTS[1] } },
      { index: 2, relevance_score: expect.any(Number), document: { text: TEXTS[2] } },
    ]);
    expect(answer.body.results[0].relevance_score).toBeGreaterThanOrEqual(answer.body.results[1].relevance_score);
    expect(answer.body).toMatchObject({
      model,
      usage: { total_tokens: TOKENS, prompt_tokens: TOKENS },
      meta: { billed_units: { input_tokens: TOKENS } },
    });
    expect(answer.body.id).toMatch(/^rerank-/);
    const sent = emulators.jina.requests.at(-1)!;
    expect(sent.url).toBe('/v1/rerank');
    expect(sent.headers.authorization).toBe(`Bearer ${RERANK_GOOD_KEY}`);
    // the documents as strings, and none asked back: the gateway fills them in from the request
    expect(sent.body).toEqual({ model, query: QUERY, documents: TEXTS, top_n: 2, return_documents: false });
    expect(emulators.jina.reported.at(-1)!.promptTokens).toBe(TOKENS);
    await expectBilled(harness, before, channelId, model, tokenCharge(TOKENS, DEFAULT_MODEL_RATIO[model]), {
      prompt_tokens: TOKENS,
      completion_tokens: 0,
      is_stream: 0,
    });
    const log = await lastConsumeLog(harness);
    expect(JSON.parse(log.other as string)).toMatchObject({ operation: 'rerank', protocol: 'openai' });
  });

  it('Cohere (type 35): v2 at /v2/rerank, billed per search unit at floor(ratio x 1000)', async () => {
    const model = 'rerank-v3.5';
    const channelId = await addRerankChannel(35, emulators.cohere, model);
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS, max_tokens_per_doc: 512 });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((result: { index: number }) => result.index)).toEqual([1, 2, 0]);
    expect(answer.body).toMatchObject({
      id: 'cohere-1',
      meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
      usage: { total_tokens: 0 },
    });
    const sent = emulators.cohere.requests.at(-1)!;
    expect(sent.url).toBe('/v2/rerank');
    // Cohere's documented fields only (it refuses return_documents and objects as documents)
    expect(sent.body).toEqual({ model, query: QUERY, documents: TEXTS, max_tokens_per_doc: 512 });
    expect(emulators.cohere.searchUnits.at(-1)).toBe(1);
    expect(DEFAULT_MODEL_RATIO[model]).toBe(1);
    await expectBilled(harness, before, channelId, model, 1000, { prompt_tokens: 0, completion_tokens: 0 });
    const log = await lastConsumeLog(harness);
    expect(log.content).toContain('1 search unit');
    expect(JSON.parse(log.other as string).formula).toBe('⌊1 × 1 × 1000⌋ × 1 = 1000');
  });

  it("AWS Bedrock (type 33): the Agents runtime's Rerank, signed (verified by the emulator), billed per query as Cohere's search units", async () => {
    const [iam] = BEDROCK_CHANNELS;
    const model = 'cohere.rerank-v3-5:0';
    const channelId = await harness.addChannel({
      name: 'bedrock-rerank',
      type: 33,
      key: iam.key,
      base_url: iam.baseUrl(bedrock),
      models: model,
    });
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS, top_n: 2 });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((result: { index: number }) => result.index)).toEqual([1, 2]);
    expect(answer.body.results[0]).toMatchObject({ index: 1, relevance_score: 1, document: { text: TEXTS[1] } });
    expect(answer.body).toMatchObject({ meta: { billed_units: { search_units: 1 } } });
    const sent = bedrock.requests.at(-1)!;
    expect(sent.url).toBe('/rerank');
    expect(String(sent.headers.authorization)).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_ACCESS_KEY}/\\d{8}/us-east-1/bedrock/aws4_request, `),
    );
    expect(sent.body).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: QUERY } }],
      sources: TEXTS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 2,
          modelConfiguration: { modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/cohere.rerank-v3-5:0' },
        },
      },
    });
    expect(bedrock.queries.at(-1)).toBe(1);
    expect(DEFAULT_MODEL_RATIO[model]).toBe(1);
    // Bedrock reports no count, but bills by the rule the gateway counts by: not an estimate
    await expectBilled(harness, before, channelId, model, searchUnitQuota(1, 1), { prompt_tokens: 0, completion_tokens: 0 });
    expect(Number((await lastConsumeLog(harness)).estimated ?? 0)).toBe(0);
    expect(JSON.parse((await lastConsumeLog(harness)).other as string).formula).toBe('⌊1 × 1 × 1000⌋ × 1 = 1000');
  });

  it('AWS Bedrock: Amazon Rerank with a Bedrock API key, 250 documents billed as the three queries Bedrock counts', async () => {
    const [, apiKey] = BEDROCK_CHANNELS;
    const model = 'amazon.rerank-v1:0';
    const channelId = await harness.addChannel({
      name: 'bedrock-rerank-key',
      type: 33,
      key: apiKey.key,
      other: apiKey.other,
      base_url: apiKey.baseUrl(bedrock),
      models: model,
    });
    const documents = Array.from({ length: 250 }, (_, index) =>
      index === 137 ? 'organic skincare for sensitive skin' : `document number ${index} about the weather`,
    );
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents, top_n: 1 });
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([{ index: 137, relevance_score: 1, document: { text: documents[137] } }]);
    expect(bedrock.requests.at(-1)!.headers.authorization).toMatch(/^Bearer ABSK/);
    expect(bedrock.queries.at(-1)).toBe(3);
    expect(DEFAULT_MODEL_RATIO[model]).toBe(0.5);
    await expectBilled(harness, before, channelId, model, searchUnitQuota(0.5, 3));
    expect(searchUnitQuota(0.5, 3)).toBe(1500);
  });

  it('AWS Bedrock: a rerank the vendor refuses (a model that is no reranker) comes back as a 400, nothing charged', async () => {
    const [iam] = BEDROCK_CHANNELS;
    const model = 'amazon.titan-text-lite-v1';
    await harness.addChannel({ name: 'bedrock-not-a-reranker', type: 33, key: iam.key, base_url: iam.baseUrl(bedrock), models: model });
    await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BGE]: BGE_RATIO, [model]: 0.15 }));
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: TEXTS });
    expect(answer.status).toBe(400);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BGE]: BGE_RATIO }));
  });

  it('Cohere: 150 documents are two search units, held and settled at two', async () => {
    const model = 'rerank-v3.5';
    const channelId = await addRerankChannel(35, emulators.cohere, model);
    const documents = Array.from({ length: 150 }, (_, index) => `document number ${index} about skin`);
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents, top_n: 3, return_documents: false });
    expect(answer.status).toBe(200);
    expect(answer.body.results).toHaveLength(3);
    expect(answer.body.results[0]).not.toHaveProperty('document');
    expect(emulators.cohere.searchUnits.at(-1)).toBe(2);
    await expectBilled(harness, before, channelId, model, searchUnitQuota(1, 2));
  });

  it('Voyage (type 53): top_k asked, `data` read, billed by the tokens Voyage counted', async () => {
    const model = 'rerank-2';
    const channelId = await addRerankChannel(53, emulators.voyage, model);
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS, top_n: 1, truncation: true });
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([{ index: 1, relevance_score: expect.any(Number), document: { text: TEXTS[1] } }]);
    expect(answer.body.usage).toEqual({ prompt_tokens: TOKENS, total_tokens: TOKENS });
    expect(emulators.voyage.requests.at(-1)!.body).toEqual({ model, query: QUERY, documents: TEXTS, top_k: 1, truncation: true });
    await expectBilled(harness, before, channelId, model, tokenCharge(TOKENS, DEFAULT_MODEL_RATIO[model]), { prompt_tokens: TOKENS });
  });

  it('SiliconFlow (type 44): tokens read from meta.tokens, billed at the operator-set ratio', async () => {
    const channelId = await addRerankChannel(44, emulators.siliconflow, BGE);
    const before = await harness.balances();
    const answer = await rerank({ model: BGE, query: QUERY, documents: DOCUMENTS, max_chunks_per_doc: 4 });
    expect(answer.status).toBe(200);
    expect(answer.body.results).toHaveLength(3);
    // a vendor option the gateway does not know passes to a vendor of Jina's shape
    expect(emulators.siliconflow.requests.at(-1)!.body).toMatchObject({ model: BGE, max_chunks_per_doc: 4, return_documents: false });
    await expectBilled(harness, before, channelId, BGE, tokenCharge(TOKENS, BGE_RATIO), { prompt_tokens: TOKENS });
  });

  it('Custom (type 8): an OpenAI-compatible server gets Jina’s shape at its /v1/rerank, and a mapped model', async () => {
    const channelId = await addRerankChannel(8, emulators.jina, 'my-reranker', { model_mapping: JSON.stringify({ 'my-reranker': BGE }) });
    await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BGE]: BGE_RATIO, 'my-reranker': BGE_RATIO }));
    const before = await harness.balances();
    const answer = await rerank({ model: 'my-reranker', query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('my-reranker');
    expect(emulators.jina.requests.at(-1)!.body).toMatchObject({ model: BGE, documents: TEXTS });
    await expectBilled(harness, before, channelId, 'my-reranker', tokenCharge(TOKENS, BGE_RATIO), { prompt_tokens: TOKENS });
  });
});

describe('routing and failures', () => {
  it('passes by a channel whose type does not rerank, without calling it', async () => {
    const model = 'jina-reranker-v2-base-multilingual';
    // Mistral's row names no rerank endpoint: even listing the model, it is not asked
    await harness.addChannel({
      name: 'mistral',
      type: 28,
      key: RERANK_GOOD_KEY,
      base_url: emulators.voyage.baseUrl,
      models: model,
      priority: 10,
    });
    const jina = await addRerankChannel(52, emulators.jina, model);
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(200);
    expect(emulators.voyage.requests).toHaveLength(0);
    await harness.settled();
    expect((await lastConsumeLog(harness)).channel_id).toBe(jina);
  });

  it('a chat to a Jina channel is passed by (Jina has no chat), while its embeddings go', async () => {
    await addRerankChannel(52, emulators.jina, 'jina-embeddings-v3');
    await harness.app.ctx.options.set(
      'ModelRatio',
      JSON.stringify({ ...DEFAULT_MODEL_RATIO, [BGE]: BGE_RATIO, 'jina-embeddings-v3': 0.025 }),
    );
    const chat = await harness.post('/v1/chat/completions', { model: 'jina-embeddings-v3', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(501);
    expect(emulators.jina.requests).toHaveLength(0);
    await harness.post('/v1/embeddings', { model: 'jina-embeddings-v3', input: 'hi' });
    // the rerank emulator answers 404 to /v1/embeddings: what matters is that the channel was asked
    expect(emulators.jina.requests.at(-1)!.url).toBe('/v1/embeddings');
  });

  it('a model only such channels serve is refused, nothing charged', async () => {
    const model = 'jina-reranker-v2-base-multilingual';
    await harness.addChannel({ name: 'mistral', type: 28, key: RERANK_GOOD_KEY, base_url: emulators.voyage.baseUrl, models: model });
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(501);
    expect(answer.body.error).toMatchObject({ code: 'channel_type_unsupported' });
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it("a vendor's 4xx goes back to the client, not retried, nothing charged, an error logged", async () => {
    const model = 'jina-reranker-v2-base-multilingual';
    await harness.app.ctx.options.set('RetryTimes', '2');
    const first = await addRerankChannel(52, emulators.jina, model, { priority: 10 });
    await addRerankChannel(52, emulators.voyage, model, { priority: 0 });
    emulators.jina.failNext(422, 'query is too long for this model');
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(422);
    expect(answer.body.error.message).toContain('query is too long for this model');
    expect(emulators.voyage.requests).toHaveLength(0);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    const errors = await harness.admin('GET', '/api/log/?type=5');
    expect(errors.data[0]).toMatchObject({ channel_id: first, model_name: model, quota: 0 });
  });

  it("a vendor's 5xx is retried on the next channel, which is billed", async () => {
    const model = 'rerank-v3.5';
    await harness.app.ctx.options.set('RetryTimes', '2');
    const failing = await addRerankChannel(35, emulators.cohere, model, { priority: 10 });
    const siliconflow = await addRerankChannel(44, emulators.siliconflow, model, { priority: 0 });
    await harness.app.ctx.db.updateTable('channels').set({ used_quota: 0 }).execute();
    emulators.cohere.failNext(503, 'the service is overloaded');
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(200);
    expect(emulators.cohere.requests).toHaveLength(1);
    expect(emulators.siliconflow.requests).toHaveLength(1);
    // SiliconFlow counts tokens: the same model is billed by what this vendor counted
    await expectBilled(harness, before, siliconflow, model, tokenCharge(TOKENS, DEFAULT_MODEL_RATIO[model]), { prompt_tokens: TOKENS });
    const log = await lastConsumeLog(harness);
    const details = JSON.parse(log.other as string);
    expect(details.attempts.map((attempt: { channelId: number; status: number }) => [attempt.channelId, attempt.status])).toEqual([
      [failing, 503],
      [siliconflow, 200],
    ]);
  });

  it("a key the vendor refuses is the gateway's problem (502 to the client, the vendor's words in the error log), nothing charged", async () => {
    const model = 'rerank-v3.5';
    const channelId = await addRerankChannel(35, emulators.cohere, model, { key: 'rerank-wrong' });
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ code: 'upstream_error' });
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
    const errors = await harness.admin('GET', '/api/log/?type=5');
    expect(errors.data[0]).toMatchObject({ channel_id: channelId, quota: 0 });
    expect(JSON.stringify(errors.data[0].details)).toContain('invalid api token');
  });
});

describe('the channel test', () => {
  it('tests a Jina or Voyage channel (no chat API) with a one-document rerank of its test model', async () => {
    for (const [type, emulator, model] of [
      [52, emulators.jina, 'jina-reranker-v2-base-multilingual'],
      [53, emulators.voyage, 'rerank-2-lite'],
    ] as const) {
      const channelId = await addRerankChannel(type, emulator, model);
      expect(await harness.admin('GET', `/api/channel/test/${channelId}`)).toMatchObject({ success: true, model });
      expect(emulator.requests.at(-1)).toMatchObject({ url: '/v1/rerank', body: { model, query: 'hi', documents: ['hi'] } });
    }
  });

  it('a rerank the vendor refuses fails the test with its words', async () => {
    const channelId = await addRerankChannel(52, emulators.jina, 'jina-reranker-m0', { key: 'rerank-wrong' });
    expect(await harness.admin('GET', `/api/channel/test/${channelId}`)).toMatchObject({
      success: false,
      message: expect.stringContaining('Unauthorized: invalid API key'),
    });
  });
});

describe('refusals before any vendor is called', () => {
  const model = 'jina-reranker-v2-base-multilingual';

  it.each([
    ['no query', { model, documents: DOCUMENTS }, 'query', 'query is required'],
    ['a query that is not a string', { model, query: ['a'], documents: DOCUMENTS }, 'query', 'query must be a string'],
    ['no documents', { model, query: QUERY }, 'documents', 'documents is required'],
    ['empty documents', { model, query: QUERY, documents: [] }, 'documents', 'documents must hold at least one document'],
    [
      'too many documents',
      { model, query: QUERY, documents: Array.from({ length: 1001 }, () => 'x') },
      'documents',
      'documents may hold at most 1000 documents (1001 were sent)',
    ],
    [
      'a number as a document',
      { model, query: QUERY, documents: ['a', 7] },
      'documents[1]',
      'documents[1] must be a string or a {"text": string} object',
    ],
    [
      'an object without text',
      { model, query: QUERY, documents: [{ content: 'a' }] },
      'documents[0]',
      'documents[0] must be a string or a {"text": string} object',
    ],
    ['top_n of 0', { model, query: QUERY, documents: DOCUMENTS, top_n: 0 }, 'top_n', 'top_n must be a positive integer'],
    [
      'return_documents not a boolean',
      { model, query: QUERY, documents: DOCUMENTS, return_documents: 'yes' },
      'return_documents',
      'return_documents must be true or false',
    ],
    ['no model', { query: QUERY, documents: DOCUMENTS }, 'model', 'model is required'],
  ])('%s: 400 in OpenAI’s error shape', async (_name, body, param, message) => {
    await addRerankChannel(52, emulators.jina, model);
    const before = await harness.balances();
    const answer = await rerank(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { message, type: 'invalid_request_error', param, code: expect.any(String) } });
    expect(emulators.jina.requests).toHaveLength(0);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });

  it('a model the key may not use: 403, nothing charged', async () => {
    await addRerankChannel(52, emulators.jina, model);
    const token = await harness.admin('POST', '/api/token/', { name: 'limited', remain_quota: 100_000, models: 'gpt-4' });
    const before = await harness.balances();
    const answer = await rerank({ model, query: QUERY, documents: DOCUMENTS }, `sk-${token.data.key}`);
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'model_not_allowed' });
    expect(emulators.jina.requests).toHaveLength(0);
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });

  it('a key without the quota the bound needs is refused before the call', async () => {
    await addRerankChannel(35, emulators.cohere, 'rerank-v3.5');
    const token = await harness.admin('POST', '/api/token/', { name: 'poor', remain_quota: 500 });
    const answer = await rerank({ model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS }, `sk-${token.data.key}`);
    expect(answer.status).toBe(429);
    expect(answer.body.error).toMatchObject({ code: 'insufficient_quota' });
    expect(emulators.cohere.requests).toHaveLength(0);
  });
});
