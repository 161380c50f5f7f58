// POST /v1/rerank as clients speak it: one shape that Jina's and Cohere's
// (v2) clients both send and read, and that Voyage's clients send too.
//
// Request: {model, query, documents: (string | {text})[], top_n?, return_documents?}
//   (`top_k`, Voyage's name, is taken for `top_n`; any other field passes to
//   vendors of Jina's shape).
// Answer:  {id, model, results: [{index, relevance_score, document?: {text}}],
//           usage: {prompt_tokens, total_tokens},            (Jina's)
//           meta: {api_version: {version: '2'}, billed_units: {search_units} | {input_tokens}}}  (Cohere's)
//   `document` is there unless the client sent return_documents: false
//   (Jina's default; a Cohere v2 client ignores it). The results come most
//   relevant first, at most top_n of them, whatever the vendor.
import type { RerankRequest, RerankResponse } from '../types';
import { promptBound } from './promptBound';
import { countTextTokens, type CountOptions } from './tokenCount';

/** The most documents one rerank may carry (Cohere's and Voyage's limit). */
export const MAX_RERANK_DOCUMENTS = 1000;

/** The documents of a search unit (Cohere: a query with up to 100 documents is one). */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

/** Special tokens a reranker adds around each query-document pair, counted into the bound. */
const PAIR_OVERHEAD_TOKENS = 8;

/** The fields of the shape; any other is a vendor's option. */
const KNOWN_FIELDS = new Set(['model', 'query', 'documents', 'top_n', 'top_k', 'return_documents']);

/** A client's rerank, read and checked. */
export interface RerankRead {
  request: RerankRequest;
  /** Whether the answer carries each result's document (true unless the client said false). */
  returnDocuments: boolean;
}

/** What is wrong with a request, for a 400 in OpenAI's error shape. */
export interface RerankProblem {
  message: string;
  param: string;
  code: 'required_field_missing' | 'invalid_field_value';
}

const problem = (param: string, message: string, code: RerankProblem['code'] = 'invalid_field_value'): RerankProblem => ({
  param,
  message,
  code,
});

/** A document as a string: itself, or the `text` of `{text}`; undefined for anything else. */
function documentText(document: unknown): string | undefined {
  if (typeof document === 'string') return document;
  if (typeof document === 'object' && document !== null && !Array.isArray(document)) {
    const { text } = document as { text?: unknown };
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/** The client's top_n (or Voyage's top_k): a positive integer, absent, or a problem. */
function topOf(body: Record<string, unknown>): number | undefined | RerankProblem {
  const field = body.top_n !== undefined && body.top_n !== null ? 'top_n' : 'top_k';
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return problem(field, `${field} must be a positive integer`);
  return value;
}

const isProblem = (value: unknown): value is RerankProblem =>
  typeof value === 'object' && value !== null && 'param' in value && 'code' in value;

/** Reads a rerank body (a JSON object) for `model`; a problem says what is wrong with it. */
export function readRerankRequest(body: Record<string, unknown>, model: string): RerankRead | RerankProblem {
  if (!model) return problem('model', 'model is required', 'required_field_missing');
  const { query, documents } = body;
  if (query === undefined || query === null || query === '') return problem('query', 'query is required', 'required_field_missing');
  if (typeof query !== 'string') return problem('query', 'query must be a string');
  if (documents === undefined || documents === null) return problem('documents', 'documents is required', 'required_field_missing');
  if (!Array.isArray(documents)) return problem('documents', 'documents must be an array of strings or {"text": string} objects');
  if (documents.length === 0) return problem('documents', 'documents must hold at least one document');
  if (documents.length > MAX_RERANK_DOCUMENTS)
    return problem('documents', `documents may hold at most ${MAX_RERANK_DOCUMENTS} documents (${documents.length} were sent)`);
  const texts: string[] = [];
  for (const [position, document] of documents.entries()) {
    const text = documentText(document);
    if (text === undefined)
      return problem(`documents[${position}]`, `documents[${position}] must be a string or a {"text": string} object`);
    texts.push(text);
  }
  const top = topOf(body);
  if (isProblem(top)) return top;
  const returned = body.return_documents;
  if (returned !== undefined && returned !== null && typeof returned !== 'boolean')
    return problem('return_documents', 'return_documents must be true or false');
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (!KNOWN_FIELDS.has(name)) extra[name] = value;
  const request: RerankRequest = { model, query, documents: texts, extra };
  if (top !== undefined) request.top_n = top;
  return { request, returnDocuments: returned !== false };
}

/**
 * The most tokens a vendor can count for a rerank (what is held before the
 * call): the query once per document, every document, and a few special
 * tokens per pair, at most a token per UTF-8 byte (tokenCount.ts `bound`);
 * and the client's other options, by the prompt's rule, once per pair.
 */
export function rerankTokenBound(request: Pick<RerankRequest, 'model' | 'query' | 'documents' | 'extra'>): number {
  const query = Buffer.byteLength(request.query, 'utf8');
  // an option a vendor of Jina's shape receives (an `instruction`, a field of its own) may be read with every pair
  const options = Object.keys(request.extra).length > 0 ? promptBound(request.extra, request.model) : 0;
  let total = 0;
  for (const document of request.documents) total += query + Buffer.byteLength(document, 'utf8') + options + PAIR_OVERHEAD_TOKENS;
  return total;
}

/** The search units held before the call: one per 100 documents (settled to what the vendor billed). */
export const rerankSearchUnitBound = (request: Pick<RerankRequest, 'documents'>) =>
  Math.ceil(request.documents.length / DOCUMENTS_PER_SEARCH_UNIT);

/**
 * The tokens of a rerank by the gateway's own tokenizer, for a vendor that
 * reported none: the query once per document and every document (the count
 * Voyage documents and Jina's cross-encoders bill).
 */
export function rerankTokenCount(request: Pick<RerankRequest, 'query' | 'documents'>, model: string, options: CountOptions = {}): number {
  const query = countTextTokens(request.query, model, options);
  let total = 0;
  for (const document of request.documents) total += query + countTextTokens(document, model, options);
  return total;
}

/** What the answer says was billed: the tokens, or the search units of a vendor that bills by them. */
export type RerankBilled = { tokens: number } | { searchUnits: number };

/** The client's answer, from the vendor's ranking and the request it answers. */
export function rerankAnswer(
  decoded: RerankResponse,
  read: RerankRead,
  fields: { id: string; model: string; billed: RerankBilled },
): Record<string, unknown> {
  const { documents, top_n: topN } = read.request;
  const ranked = decoded.results.filter((result) => result.index < documents.length).sort((a, b) => b.relevance_score - a.relevance_score);
  const results = (topN === undefined ? ranked : ranked.slice(0, topN)).map((result) =>
    read.returnDocuments
      ? { index: result.index, relevance_score: result.relevance_score, document: { text: documents[result.index] } }
      : { index: result.index, relevance_score: result.relevance_score },
  );
  const tokens = 'tokens' in fields.billed ? fields.billed.tokens : 0;
  return {
    id: decoded.id ?? fields.id,
    model: fields.model,
    results,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
    meta: {
      api_version: { version: '2' },
      billed_units: 'tokens' in fields.billed ? { input_tokens: tokens } : { search_units: fields.billed.searchUnits },
    },
  };
}
