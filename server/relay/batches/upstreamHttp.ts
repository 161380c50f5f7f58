// The HTTP side of running a batch at the vendor: where OpenAI's, Azure
// OpenAI's and Gemini's Files and Batch APIs live for a channel, how its key is sent, one
// call with a timeout that counts idle time only (a 200 MB upload or output
// file may take minutes, but never stalls that long), and the error a failed
// call throws, marked retryable when another try may succeed.
// References: https://platform.openai.com/docs/api-reference/batch
// https://learn.microsoft.com/azure/ai-services/openai/how-to/batch
// https://ai.google.dev/api/batch-mode
import { findChannelType, openAiPathPrefix } from '../../../common/channelTypes';
import { trimmedBaseUrl } from '../../protocols/shared';
import { azureAdaptor, azureApiVersion, azureDeployment } from '../../protocols/upstream/azure';
import { geminiAdaptor } from '../../protocols/upstream/gemini';
import { baseUrlOf, openAiAuthHeader, openAiFailure } from '../../protocols/upstream/openai';
import type { ChannelConfig, UpstreamFailure } from '../../protocols/types';

/** A failed call to the vendor's Files or Batch API. */
export class UpstreamBatchError extends Error {
  /** The vendor's HTTP status; undefined when no answer came (network failure, timeout). */
  readonly status: number | undefined;
  readonly code: string | undefined;
  /** True for a network failure, a timeout, a 5xx or a 429: the same call may succeed later. */
  readonly retryable: boolean;
  /** The vendor's words prove the channel's key can never succeed as it is. */
  readonly deadKey: boolean;

  constructor(message: string, details: { status?: number; code?: string; retryable: boolean; deadKey?: boolean }) {
    super(message);
    this.name = 'UpstreamBatchError';
    this.status = details.status;
    this.code = details.code;
    this.retryable = details.retryable;
    this.deadKey = details.deadKey ?? false;
  }
}

/** How the client reaches one channel's vendor. */
export interface BatchVendor {
  kind: 'openai' | 'azure' | 'gemini';
  /** The channel's base URL (empty when it has none: every call then fails). */
  base: string;
  /** The full URL of a Files or Batch API path (`/files`, `/batches/{id}/cancel`; Gemini's carry their version: `/v1beta/batches/{id}`). */
  url(path: string): string;
  /** The key's header. */
  auth: Record<string, string>;
  /** The vendor's name for a batch endpoint (`/v1/chat/completions` for OpenAI, `/chat/completions` for Azure). */
  endpoint(endpoint: string): string;
  /** The model a line's body names: Azure reads it as the deployment, named as the relay names it. */
  model(model: string): string;
  failure(status: number, body: string): UpstreamFailure;
}

/** The first api-version of Azure's data plane that serves the Batch API; older ones (the type's fallback) do not. */
const AZURE_FIRST_BATCH_VERSION = '2024-07-01';
/** What an older version is replaced with: the generally available authoring version that has batches. */
const AZURE_BATCH_VERSION = '2024-10-21';

/**
 * Gemini's Batch API (Google AI Studio): paths carry their own version and
 * prefix (/v1beta, /upload/v1beta, /download/v1beta), so the base is the
 * host, a pasted version taken off. Vertex AI channels have none here: its
 * batch prediction reads its input only from Cloud Storage or BigQuery, which
 * the gateway does not have, so the gateway runs their batches itself.
 */
function geminiVendor(channel: ChannelConfig, defaultBaseUrl: string | undefined): BatchVendor {
  const base = trimmedBaseUrl(channel.baseUrl, defaultBaseUrl).replace(/\/v1(beta|alpha)?\d*$/, '');
  return {
    kind: 'gemini',
    base,
    auth: { 'x-goog-api-key': channel.key.trim() },
    url: (path) => `${base}${path}`,
    endpoint: (endpoint) => endpoint,
    model: (model) => model,
    failure: (status, body) => geminiAdaptor.failure(status, body),
  };
}

/** The Batch API of a channel of type OpenAI, Azure OpenAI or Gemini; undefined for any other type. */
export function batchVendorOf(channel: ChannelConfig): BatchVendor | undefined {
  const row = findChannelType(channel.type);
  if (!row) return undefined;
  if (row.protocol === 'gemini') return geminiVendor(channel, row.defaultBaseUrl);
  const base = baseUrlOf(channel);
  const auth = openAiAuthHeader(row, channel.key);
  if (row.protocol === 'azure') {
    const asked = azureApiVersion(channel, {});
    const version = encodeURIComponent(asked.slice(0, 10) < AZURE_FIRST_BATCH_VERSION ? AZURE_BATCH_VERSION : asked);
    return {
      kind: 'azure',
      base,
      auth,
      url: (path) => `${base}/openai${path}?api-version=${version}`,
      endpoint: (endpoint) => endpoint.replace(/^\/v1\//, '/'),
      model: azureDeployment,
      failure: (status, body) => azureAdaptor.failure(status, body),
    };
  }
  // OpenAI's own API only: resellers and compatible vendors rarely serve its Batch API, so the gateway runs theirs
  if (row.value !== 1) return undefined;
  const prefix = openAiPathPrefix(channel.type, channel.other, channel.baseUrl) ?? '/v1';
  return {
    kind: 'openai',
    base,
    auth,
    url: (path) => `${base}${prefix}${path}`,
    endpoint: (endpoint) => endpoint,
    model: (model) => model,
    failure: openAiFailure,
  };
}

/** An abort that fires after `ms` without progress; `touch` marks progress. */
export function idleAbort(ms: number): { signal: AbortSignal; touch: () => void; stop: () => void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no progress for ${ms} ms`)), ms);
    timer.unref();
  };
  touch();
  return { signal: controller.signal, touch, stop: () => clearTimeout(timer) };
}

export interface CallOptions {
  fetch: typeof fetch;
  timeoutMs: number;
}

export interface VendorCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  /** A text or bytes, or a stream made for the call, which calls `progress` as it moves (the idle timer starts again). */
  body?: string | Uint8Array | ((progress: () => void) => ReadableStream<Uint8Array>);
  /** For a call whose answer is read as a stream: the idle timer keeps running until the caller stops it. */
  keepTimer?: boolean;
}

/** One call to the vendor: the answer when 2xx, else an UpstreamBatchError. */
export async function callVendor(
  vendor: BatchVendor,
  call: VendorCall,
  options: CallOptions,
): Promise<{ response: Response; idle: ReturnType<typeof idleAbort> }> {
  if (!vendor.base)
    throw new UpstreamBatchError('the channel has no base URL for its batch API', { code: 'channel_base_url_missing', retryable: false });
  const idle = idleAbort(options.timeoutMs);
  let response: Response;
  try {
    response = await options.fetch(vendor.url(call.path), {
      method: call.method,
      headers: { ...call.headers, ...vendor.auth },
      body: typeof call.body === 'function' ? call.body(idle.touch) : call.body,
      signal: idle.signal,
      // a streamed body needs this in Node's fetch
      ...(typeof call.body === 'function' ? { duplex: 'half' } : {}),
    });
  } catch (error) {
    idle.stop();
    const timedOut = idle.signal.aborted;
    throw new UpstreamBatchError(
      timedOut
        ? `the vendor did not answer within ${options.timeoutMs} ms`
        : `the vendor could not be reached: ${(error as Error).message}`,
      { code: timedOut ? 'upstream_timeout' : 'upstream_unreachable', retryable: true },
    );
  }
  if (response.ok) {
    if (!call.keepTimer) idle.stop();
    return { response, idle };
  }
  const text = await response.text().catch(() => '');
  idle.stop();
  const failure = vendor.failure(response.status, text);
  throw new UpstreamBatchError(failure.message || `the vendor answered HTTP ${response.status}`, {
    status: response.status,
    code: failure.code === null || failure.code === undefined ? undefined : String(failure.code),
    retryable: response.status >= 500 || response.status === 429,
    deadKey: failure.deadKey,
  });
}

/** A call whose answer is a JSON object. */
export async function callVendorJson(vendor: BatchVendor, call: VendorCall, options: CallOptions): Promise<Record<string, unknown>> {
  const { response } = await callVendor(vendor, { ...call, headers: { accept: 'application/json', ...call.headers } }, options);
  const parsed: unknown = await response.json().catch(() => undefined);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UpstreamBatchError('the vendor answered something other than a JSON object', { code: 'upstream_malformed', retryable: true });
  return parsed as Record<string, unknown>;
}
