// A loopback reranker speaking one of the rerank shapes vendors speak:
// - `cohere`: Cohere's v2 (https://docs.cohere.com/reference/rerank), POST
//   /v2/rerank with string documents only, answered `{id, results, meta:
//   {api_version, billed_units: {search_units}}}`, errors `{"message": ...}`;
// - `jina`: Jina's (https://api.jina.ai/redoc#tag/rerank), POST /v1/rerank,
//   answered `{model, usage: {total_tokens, prompt_tokens}, results}` (with
//   each `document` unless return_documents is false), errors `{"detail": ...}`;
// - `siliconflow`: Jina's request, SiliconFlow's answer (tokens in
//   `meta.tokens`, no `usage`), errors `{"code", "message", "data"}`;
// - `voyage`: Voyage's (https://docs.voyageai.com/reference/reranker-api),
//   POST /v1/rerank with `top_k`, answered `{object, data, model, usage:
//   {total_tokens}}`, errors `{"detail": ...}`.
// The key `rerank-good` is the only one taken (401 otherwise). A document's
// score is the share of the query's words it holds; a word is a token, and
// the tokens billed are the query's once per document plus every document's
// (Voyage's documented count); Cohere bills a search unit per 100 documents.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, type EmulatedRequest, type ProtocolEmulator } from './types';

export type RerankShape = 'cohere' | 'jina' | 'siliconflow' | 'voyage';

export const RERANK_GOOD_KEY = 'rerank-good';

export interface RerankEmulator extends ProtocolEmulator {
  shape: RerankShape;
  /** The search units billed, one entry per answered Cohere call. */
  searchUnits: number[];
  /** The next call is answered with this status and the vendor's own error body. */
  failNext(status: number, message: string): void;
}

const PATHS: Record<RerankShape, string> = { cohere: '/v2/rerank', jina: '/v1/rerank', siliconflow: '/v1/rerank', voyage: '/v1/rerank' };

/** The fields each strict vendor takes; Jina's shape takes any (its servers have options of their own). */
const ACCEPTED: Partial<Record<RerankShape, ReadonlySet<string>>> = {
  cohere: new Set(['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc']),
  voyage: new Set(['model', 'query', 'documents', 'top_k', 'return_documents', 'truncation']),
};

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

function errorBody(shape: RerankShape, status: number, message: string): unknown {
  switch (shape) {
    case 'cohere':
      return { id: 'err-1', message };
    case 'siliconflow':
      return { code: 20000 + status, message, data: null };
    default:
      return { detail: message };
  }
}

function send(response: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

export async function startRerankEmulator(shape: RerankShape): Promise<RerankEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ProtocolEmulator['reported'] = [];
  const searchUnits: number[] = [];
  let failure: { status: number; message: string } | undefined;

  const server = createServer((request, response) => {
    void readBody(request).then((raw) => {
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw });
      const refuse = (status: number, message: string) => send(response, status, errorBody(shape, status, message));
      if (request.method !== 'POST' || request.url !== PATHS[shape]) return refuse(404, `no route ${request.method} ${request.url}`);
      if (request.headers.authorization !== `Bearer ${RERANK_GOOD_KEY}`)
        return refuse(401, shape === 'cohere' ? 'invalid api token' : 'Unauthorized: invalid API key');
      if (failure) {
        const { status, message } = failure;
        failure = undefined;
        return refuse(status, message);
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse(400, 'the body must be a JSON object');
      const fields = body as Record<string, unknown>;
      const accepted = ACCEPTED[shape];
      const unknown = accepted ? Object.keys(fields).filter((name) => !accepted.has(name)) : [];
      if (unknown.length) return refuse(400, `invalid request: unknown field ${unknown.join(', ')}`);
      const { model, query, documents } = fields;
      if (typeof model !== 'string' || typeof query !== 'string' || !Array.isArray(documents) || documents.length === 0)
        return refuse(400, 'model, query and documents are required');
      const texts = documents.filter((document): document is string => typeof document === 'string');
      if (texts.length !== documents.length) return refuse(400, 'documents must be strings');
      const top = shape === 'voyage' ? fields.top_k : fields.top_n;
      const queryWords = new Set(words(query));
      const scored = texts
        .map((text, index) => {
          const held = new Set(words(text));
          const shared = [...queryWords].filter((word) => held.has(word)).length;
          return { index, relevance_score: Number((shared / Math.max(1, queryWords.size) - index / 1e6).toFixed(6)) };
        })
        .sort((a, b) => b.relevance_score - a.relevance_score);
      const ranked = typeof top === 'number' ? scored.slice(0, top) : scored;
      const tokens = words(query).length * texts.length + texts.reduce((sum, text) => sum + words(text).length, 0);
      switch (shape) {
        case 'cohere': {
          const units = Math.ceil(texts.length / 100);
          searchUnits.push(units);
          return send(response, 200, {
            id: `cohere-${requests.length}`,
            results: ranked,
            meta: { api_version: { version: '2' }, billed_units: { search_units: units } },
          });
        }
        case 'jina': {
          reported.push({ promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0 });
          const withDocuments = fields.return_documents !== false;
          const results = ranked.map((result) => (withDocuments ? { ...result, document: { text: texts[result.index] } } : result));
          return send(response, 200, { model, usage: { total_tokens: tokens, prompt_tokens: tokens }, results });
        }
        case 'siliconflow': {
          reported.push({ promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0 });
          return send(response, 200, {
            id: `sf-${requests.length}`,
            results: ranked,
            meta: {
              billed_units: { input_tokens: tokens, output_tokens: 0, search_units: 0, classifications: 0 },
              tokens: { input_tokens: tokens, output_tokens: 0 },
            },
          });
        }
        case 'voyage': {
          reported.push({ promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0 });
          const data = ranked.map((result) => (fields.return_documents === true ? { ...result, document: texts[result.index] } : result));
          return send(response, 200, { object: 'list', data, model, usage: { total_tokens: tokens } });
        }
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    shape,
    baseUrl: listening.baseUrl,
    requests,
    reported,
    searchUnits,
    failNext(status, message) {
      failure = { status, message };
    },
    close: () => listening.close(),
  };
}
