// Where a Vertex AI call goes, and its body: Gemini models through Google's
// publisher endpoint with Gemini's own request, Claude through Anthropic's
// publisher endpoint with the Messages request Vertex wants (the model in the
// URL, not the body, and Vertex's anthropic_version).
import { readServiceAccountKey } from '../../../../common/serviceAccountKey';
import { trimmedBaseUrl, upstreamFailure } from '../../shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatRequest,
  type EmbeddingRequest,
  type HttpTarget,
  type UpstreamFailure,
} from '../../types';
import { encodeChat as encodeAnthropicChat } from '../anthropic/request';
import { encodeChat as encodeGeminiChat } from '../gemini/request';
import { malformedKey } from './credential';

export const DEFAULT_REGION = 'us-central1';
/** Claude on Vertex names its API version in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Whose model a call asks for: Anthropic's (Claude) or Google's (Gemini and the rest of Google's publisher models). */
export type VertexPublisher = 'anthropic' | 'google';

export const publisherOf = (model: string): VertexPublisher => (/^claude-/i.test(model) ? 'anthropic' : 'google');

// Claude's plain API names whose Vertex ids are not the plain name with "@" before the date
// (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude)
const CLAUDE_VERTEX_IDS: Record<string, string> = {
  'claude-3-5-sonnet-20241022': 'claude-3-5-sonnet-v2@20241022',
  'claude-3-5-sonnet-latest': 'claude-3-5-sonnet-v2@20241022',
  'claude-3-5-haiku-latest': 'claude-3-5-haiku@20241022',
  'claude-3-7-sonnet-latest': 'claude-3-7-sonnet@20250219',
  'claude-sonnet-4-0': 'claude-sonnet-4@20250514',
  'claude-sonnet-4': 'claude-sonnet-4@20250514',
  'claude-opus-4-0': 'claude-opus-4@20250514',
  'claude-opus-4': 'claude-opus-4@20250514',
  'claude-opus-4-1': 'claude-opus-4-1@20250805',
  'claude-sonnet-4-5': 'claude-sonnet-4-5@20250929',
  'claude-haiku-4-5': 'claude-haiku-4-5@20251001',
  'claude-opus-4-5': 'claude-opus-4-5@20251101',
};

/**
 * The Vertex id of a Claude model: a Vertex id as it is (`...@20250514`), a
 * known alias from the table, else a dated API name with `@` before its date
 * (`claude-3-haiku-20240307` → `claude-3-haiku@20240307`). The relay bills
 * the plain name, which is the one the price catalog knows.
 */
export function vertexClaudeModel(model: string): string {
  if (model.includes('@')) return model;
  const known = CLAUDE_VERTEX_IDS[model];
  if (known) return known;
  const dated = /^(claude-.+)-(\d{8})$/.exec(model);
  return dated ? `${dated[1]}@${dated[2]}` : model;
}

/** Where a channel's calls go: its region, and the project (from `other`, else the key). */
export interface VertexPlace {
  region: string;
  project: string;
}

/**
 * `other` is `region` or `region|project`: empty for us-central1, `global`
 * for the global endpoint; a project there overrides the key's project_id
 * (a service account calling into another project it is granted).
 */
export function placeOf(channel: ChannelConfig): VertexPlace | UpstreamFailure {
  const [regionText = '', projectText = ''] = channel.other.split('|');
  const region = regionText.trim() || DEFAULT_REGION;
  if (!/^[a-z0-9-]+$/.test(region))
    return malformedKey(`the region (the channel's "other") must look like "us-central1" or "global", not "${region}"`);
  let project = projectText.trim();
  if (!project) {
    const account = accountOf(channel.key);
    if ('problem' in account) return malformedKey(account.problem);
    project = account.project_id;
  }
  return { region, project };
}

// the key read once per key text, not on every call (reading it is most of a call's target() time)
const accounts = new Map<string, ReturnType<typeof readServiceAccountKey>>();
const MAX_ACCOUNTS = 256;

function accountOf(key: string): ReturnType<typeof readServiceAccountKey> {
  let account = accounts.get(key);
  if (!account) {
    account = readServiceAccountKey(key);
    if (accounts.size >= MAX_ACCOUNTS) accounts.clear();
    accounts.set(key, account);
  }
  return account;
}

/** Google's host for a region: `{region}-aiplatform.googleapis.com`, or the global one. */
export const regionalOrigin = (region: string): string =>
  region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;

/** The method a call is made with: predict for embeddings; Claude's rawPredict, or Gemini's generateContent, each streamed or not. */
function methodOf(call: AdaptorCall, publisher: string): string {
  if (call.operation === 'embeddings') return 'predict';
  if (publisher === 'anthropic') return call.stream ? 'streamRawPredict' : 'rawPredict';
  return call.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (call.operation !== 'chat' && call.operation !== 'embeddings')
    return upstreamFailure(501, `Vertex AI channels do not offer ${call.operation}`, { code: 'operation_unsupported', retryable: true });
  if (!call.credential)
    return upstreamFailure(500, 'a Vertex AI call needs an access token from the service-account exchange', {
      type: 'invalid_channel_config',
      retryable: true,
    });
  const place = placeOf(channel);
  if (isUpstreamFailure(place)) return place;
  const publisher = publisherOf(call.model);
  if (call.operation === 'embeddings' && publisher !== 'google') {
    return upstreamFailure(400, `${call.model} has no embeddings on Vertex AI`, {
      type: 'invalid_request_error',
      code: 'model_not_embedding',
      retryable: true,
    });
  }
  // a channel's base URL replaces Google's origin (a proxy, or the tests' emulator); one ending in its version is taken as it is
  const base = trimmedBaseUrl(channel.baseUrl, regionalOrigin(place.region));
  const versioned = /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`;
  const model = publisher === 'anthropic' ? vertexClaudeModel(call.model) : call.model;
  const method = methodOf(call, publisher);
  // each segment escaped, but "@" left as Google writes it in Claude's ids (a path segment may hold it)
  const path = ['projects', place.project, 'locations', place.region, 'publishers', publisher, 'models', model]
    .map((segment) => encodeURIComponent(segment).replace(/%40/g, '@'))
    .join('/');
  return {
    url: `${versioned}/${path}:${method}`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${call.credential}`,
      'content-type': 'application/json',
      ...(call.stream ? { accept: 'text/event-stream' } : {}),
    },
  };
}

export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (publisherOf(call.model) === 'google') return encodeGeminiChat(request, call);
  // the Messages body as the anthropic adaptor writes it, less the model (it is in the URL) and with Vertex's version
  const { model: _model, ...body } = JSON.parse(encodeAnthropicChat(request, call)) as Record<string, unknown>;
  return JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body });
}

/**
 * Embeddings through Google's publisher `:predict` endpoint (text-embedding-005,
 * text-multilingual-embedding-002, gemini-embedding-001): one instance per
 * input text, the client's `dimensions` as `outputDimensionality`.
 * https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api
 */
export function encodeEmbeddings(request: EmbeddingRequest): string {
  const inputs = Array.isArray(request.input) ? request.input : [request.input];
  // token arrays cannot be turned back into the text Vertex embeds
  if (inputs.some((input) => typeof input !== 'string')) throw new TypeError('Vertex AI embeddings take text input only, not token arrays');
  const body: Record<string, unknown> = { instances: (inputs as string[]).map((content) => ({ content })) };
  if (typeof request.dimensions === 'number') body.parameters = { outputDimensionality: request.dimensions };
  return JSON.stringify(body);
}
