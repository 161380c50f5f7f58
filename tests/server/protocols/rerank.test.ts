// Rerank's codecs over fixtures written from each vendor's published wire
// format (server/protocols/upstream/rerank/__fixtures__): one client request
// encoded for Cohere's v2, Jina's and Voyage's shapes, each vendor's answer
// decoded with the usage it bills by, their error bodies read, and the
// client side: the request read and checked, the bounds held before the call,
// and the answer written back in the one client shape.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES } from '../../../common/channelTypes';
import {
  readRerankRequest,
  rerankAnswer,
  rerankSearchUnitBound,
  rerankTokenBound,
  rerankTokenCount,
  type RerankRead,
} from '../../../server/protocols/inbound/rerank';
import { type AdaptorCall, type ChannelConfig, type RerankResponse } from '../../../server/protocols/types';
import { adaptorForChannelType } from '../../../server/protocols/upstream';
import { promptBound } from '../../../server/protocols/inbound/promptBound';
import { targetChannelType } from '../../../server/import/products';
import { azureAdaptor } from '../../../server/protocols/upstream/azure';
import { openAiAdaptor } from '../../../server/protocols/upstream/openai';

const FIXTURES = join(__dirname, '../../../server/protocols/upstream/rerank/__fixtures__');
const text = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(text(name));

const clientBody = json('request.json') as Record<string, unknown>;
const read = readRerankRequest(clientBody, 'client-model') as RerankRead;

const channel = (type: number, baseUrl = ''): ChannelConfig => ({ type, key: 'rk-test', baseUrl, other: '' });
const callFor = (config: ChannelConfig, model: string): AdaptorCall => ({
  channel: config,
  operation: 'rerank',
  model,
  stream: false,
  responseId: 'chatcmpl-x',
  now: 1_700_000_000,
});

/** Each vendor: its type, the model, the path its rerank goes to, and its fixtures' stem. */
const VENDORS = [
  { name: 'Cohere', type: 35, model: 'rerank-v3.5', url: 'https://api.cohere.ai/v2/rerank', stem: 'cohere', request: 'cohere' },
  {
    name: 'Jina',
    type: 52,
    model: 'jina-reranker-v2-base-multilingual',
    url: 'https://api.jina.ai/v1/rerank',
    stem: 'jina',
    request: 'jina',
  },
  {
    name: 'SiliconFlow',
    type: 44,
    model: 'BAAI/bge-reranker-v2-m3',
    url: 'https://api.siliconflow.cn/v1/rerank',
    stem: 'siliconflow',
    request: 'jina',
  },
  { name: 'Voyage', type: 53, model: 'rerank-2', url: 'https://api.voyageai.com/v1/rerank', stem: 'voyage', request: 'voyage' },
] as const;

describe.each(VENDORS)('$name (type $type)', ({ type, model, url, stem, request }) => {
  const config = channel(type);
  const call = callFor(config, model);

  it('is served by the OpenAI-wire adaptor, at its own rerank path with the key as a bearer token', () => {
    expect(adaptorForChannelType(type)).toBe(openAiAdaptor);
    expect(openAiAdaptor.operations.has('rerank')).toBe(true);
    expect(openAiAdaptor.servesOperation!(type, 'rerank')).toBe(true);
    expect(openAiAdaptor.target(config, call)).toEqual({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer rk-test' },
    });
  });

  it("encodes the client's request in the vendor's shape", () => {
    const body = openAiAdaptor.encodeRerank!({ ...read.request, model }, call);
    const expected = json(`${request}.request.json`) as Record<string, unknown>;
    expect(JSON.parse(body)).toEqual({ ...expected, model });
  });

  it("decodes the vendor's answer with the usage it bills by", () => {
    expect(openAiAdaptor.decodeRerank!(text(`${stem}.answer.json`), call)).toEqual(json(`${stem}.expect.json`));
  });
});

describe('answers that are not rankings', () => {
  const call = callFor(channel(52), 'jina-reranker-v2-base-multilingual');
  const decode = (body: string) => openAiAdaptor.decodeRerank!(body, call);

  it('an error object inside a 200 is a failure', () => {
    const failure = decode(
      JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }),
    );
    expect(failure).toMatchObject({ status: 401, deadKey: true, message: 'Incorrect API key provided' });
  });

  it('a body without a results list, or not JSON, is a 502', () => {
    expect(decode('{"model":"m"}')).toMatchObject({ status: 502, message: "the upstream's rerank answer has no results list" });
    expect(decode('<html>busy</html>')).toMatchObject({ status: 502, retryable: true });
    expect(openAiAdaptor.decodeRerank!('{"results":[]}', callFor(channel(53), 'rerank-2'))).toMatchObject({
      status: 502,
      message: "the upstream's rerank answer has no data list",
    });
  });

  it('items without an integer index or a numeric score are passed over; a usage left out is left unknown', () => {
    const decoded = decode(
      JSON.stringify({
        results: [
          { index: 0, relevance_score: 0.5 },
          { index: '1', relevance_score: 0.4 },
          { index: 2 },
          null,
          { index: 3, relevance_score: 0.1 },
        ],
      }),
    ) as RerankResponse;
    expect(decoded.results).toEqual([
      { index: 0, relevance_score: 0.5 },
      { index: 3, relevance_score: 0.1 },
    ]);
    expect(decoded).toMatchObject({ billedBy: 'tokens', model: 'jina-reranker-v2-base-multilingual' });
    expect(decoded.tokens).toBeUndefined();
  });

  it('a Cohere answer without billed units bills by search units still (the relay then holds to its bound)', () => {
    const decoded = openAiAdaptor.decodeRerank!(
      '{"id":"x","results":[{"index":0,"relevance_score":1}]}',
      callFor(channel(35), 'rerank-v3.5'),
    ) as RerankResponse;
    expect(decoded).toMatchObject({ billedBy: 'search_units', id: 'x' });
    expect(decoded.searchUnits).toBeUndefined();
  });
});

describe("the vendors' error bodies", () => {
  it("Cohere's message, FastAPI's detail (a string or a list) and OpenAI's error object are read", () => {
    expect(openAiAdaptor.failure(401, text('cohere.error.json'))).toMatchObject({
      status: 401,
      message: 'invalid api token',
      retryable: false,
    });
    expect(openAiAdaptor.failure(422, text('jina.error.json'))).toMatchObject({
      status: 422,
      message: 'field required; ensure this value has at least 1 items',
      retryable: false,
    });
    expect(openAiAdaptor.failure(401, text('voyage.error.json'))).toMatchObject({ message: 'Provided API key is invalid.' });
    expect(openAiAdaptor.failure(500, '{"code":50000,"message":"internal error","data":null}')).toMatchObject({
      status: 500,
      message: 'internal error',
      retryable: true,
    });
  });
});

describe('which types rerank', () => {
  it('the rows that name a rerank endpoint, and no other', () => {
    const reranking = CHANNEL_TYPES.filter(
      (row) => adaptorForChannelType(row.value) === openAiAdaptor && openAiAdaptor.servesOperation!(row.value, 'rerank'),
    ).map((row) => row.value);
    expect(reranking.sort((a, b) => a - b)).toEqual([8, 35, 44, 50, 52, 53]);
    expect(openAiAdaptor.servesOperation!(1, 'chat')).toBe(true);
    expect(azureAdaptor.operations.has('rerank')).toBe(false);
    for (const row of CHANNEL_TYPES) if (row.rerank) expect(row.protocol).toBe('openai');
  });

  it('Jina and Voyage serve embeddings and rerank, and nothing else', () => {
    for (const type of [52, 53]) {
      expect(
        ['chat', 'completions', 'embeddings', 'images', 'responses', 'rerank'].filter((operation) =>
          openAiAdaptor.servesOperation!(type, operation as 'chat'),
        ),
      ).toEqual(['embeddings', 'rerank']);
    }
  });

  it("new-api's Jina (38) imports as Jina here (52)", () => {
    expect(targetChannelType('new-api', 38)).toBe(52);
  });

  it('a type without a rerank endpoint gets no target for it', () => {
    expect(openAiAdaptor.target(channel(1), callFor(channel(1), 'm'))).toMatchObject({ status: 501, retryable: true });
  });

  it("a Custom channel's rerank goes to its own base URL", () => {
    const custom = channel(8, 'http://127.0.0.1:9/');
    expect(openAiAdaptor.target(custom, callFor(custom, 'm'))).toMatchObject({ url: 'http://127.0.0.1:9/v1/rerank' });
  });
});

describe("the client's request", () => {
  it('documents as strings, top_n, the options the relay does not know kept apart', () => {
    expect(read).toEqual({
      request: {
        model: 'client-model',
        query: 'What is the capital of the United States?',
        documents: [
          'Carson City is the capital city of the American state of Nevada.',
          'Washington, D.C. is the capital of the United States.',
          'Capital punishment has existed in the United States since before it was a country.',
        ],
        top_n: 2,
        extra: { max_tokens_per_doc: 512, truncation: true, max_chunks_per_doc: 3 },
      },
      returnDocuments: true,
    });
  });

  it("takes Voyage's top_k for top_n, and return_documents false", () => {
    expect(readRerankRequest({ query: 'q', documents: ['a'], top_k: 1, return_documents: false }, 'm')).toMatchObject({
      request: { top_n: 1, extra: {} },
      returnDocuments: false,
    });
    expect(readRerankRequest({ query: 'q', documents: ['a'], top_n: null }, 'm')).toMatchObject({ request: { extra: {} } });
  });

  it('says which field is wrong', () => {
    expect(readRerankRequest({ query: '', documents: ['a'] }, 'm')).toEqual({
      param: 'query',
      message: 'query is required',
      code: 'required_field_missing',
    });
    expect(readRerankRequest({ query: 'q', documents: 'a' }, 'm')).toMatchObject({ param: 'documents' });
    expect(readRerankRequest({ query: 'q', documents: ['a'], top_k: 1.5 }, 'm')).toMatchObject({
      param: 'top_k',
      message: 'top_k must be a positive integer',
    });
    expect(readRerankRequest({ query: 'q', documents: [{ text: 1 }] }, 'm')).toMatchObject({ param: 'documents[0]' });
  });
});

describe('the bounds held before the call', () => {
  it('tokens: the query once per document and every document, a token per byte at most, never below a real count', () => {
    const { request } = read;
    const bytes = Buffer.byteLength(request.query) * 3 + request.documents.reduce((sum, document) => sum + Buffer.byteLength(document), 0);
    // the client's options (a Jina-shaped vendor receives them) count by the prompt's rule, once per pair
    expect(Object.keys(request.extra).length).toBeGreaterThan(0);
    expect(rerankTokenBound(request)).toBe(bytes + 3 * 8 + 3 * promptBound(request.extra, request.model));
    expect(rerankTokenBound({ ...request, extra: {} })).toBe(bytes + 3 * 8);
    expect(
      rerankTokenBound({ ...request, extra: { instruction: 'x'.repeat(1000) } }) - rerankTokenBound({ ...request, extra: {} }),
    ).toBeGreaterThanOrEqual(3 * 1000);
    expect(rerankTokenBound(request)).toBeGreaterThanOrEqual(rerankTokenCount(request, 'rerank-2'));
    expect(rerankTokenCount(request, 'rerank-2')).toBeGreaterThan(0);
  });

  it('search units: one per 100 documents', () => {
    expect(rerankSearchUnitBound({ documents: ['a'] })).toBe(1);
    expect(rerankSearchUnitBound({ documents: Array.from({ length: 100 }, () => 'a') })).toBe(1);
    expect(rerankSearchUnitBound({ documents: Array.from({ length: 101 }, () => 'a') })).toBe(2);
  });
});

describe("the client's answer", () => {
  const decoded: RerankResponse = {
    model: 'vendor-model',
    billedBy: 'tokens',
    tokens: 97,
    results: [
      { index: 0, relevance_score: 0.2 },
      { index: 7, relevance_score: 0.99 },
      { index: 1, relevance_score: 0.9 },
      { index: 2, relevance_score: 0.5 },
    ],
  };

  it('most relevant first, at most top_n, an index past the documents dropped, documents filled in, usage in both shapes', () => {
    expect(rerankAnswer(decoded, read, { id: 'rerank-1', model: 'client-model', billed: { tokens: 97 } })).toEqual({
      id: 'rerank-1',
      model: 'client-model',
      results: [
        { index: 1, relevance_score: 0.9, document: { text: 'Washington, D.C. is the capital of the United States.' } },
        {
          index: 2,
          relevance_score: 0.5,
          document: { text: 'Capital punishment has existed in the United States since before it was a country.' },
        },
      ],
      usage: { prompt_tokens: 97, total_tokens: 97 },
      meta: { api_version: { version: '2' }, billed_units: { input_tokens: 97 } },
    });
  });

  it("the vendor's id, no documents when the client asked none, search units in Cohere's meta", () => {
    const answer = rerankAnswer(
      { ...decoded, id: 'vendor-id' },
      { ...read, returnDocuments: false, request: { ...read.request, top_n: undefined } },
      { id: 'rerank-1', model: 'm', billed: { searchUnits: 2 } },
    );
    expect(answer).toMatchObject({
      id: 'vendor-id',
      usage: { prompt_tokens: 0, total_tokens: 0 },
      meta: { billed_units: { search_units: 2 } },
    });
    expect(answer.results).toEqual([
      { index: 1, relevance_score: 0.9 },
      { index: 2, relevance_score: 0.5 },
      { index: 0, relevance_score: 0.2 },
    ]);
  });
});
