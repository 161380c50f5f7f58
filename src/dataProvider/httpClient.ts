// The only place the console calls fetch. It unwraps the {success, message,
// data} envelope, and turns every failure into a react-admin HttpError whose
// message follows the spec's error catalogue, so all screens report errors
// the same way.
import { HttpError } from 'react-admin';
import type { Envelope } from '../../common/envelope';
import { isMessageCode } from '../../common/messageCodes';

/** Message keys for statuses with a fixed meaning; translated where shown. */
export const STATUS_MESSAGES: Record<number, string> = {
  429: 'app.errors.too_many_requests',
  500: 'app.errors.internal',
  405: 'app.errors.demo_only',
};

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

/**
 * The message key for a refusal the server marked with a known code: shown
 * translated (zh included) instead of the server's English; unknown codes and
 * uncoded refusals keep the server's text.
 */
export function codedMessage(envelope: Envelope | undefined): string | undefined {
  return isMessageCode(envelope?.code) ? `app.server_message.${envelope.code}` : undefined;
}

type UnauthorizedHandler = () => void;
let onUnauthorized: UnauthorizedHandler = () => undefined;

/**
 * What to do when any call answers 401: go to /login?expired=true, so the user signs in again.
 * The app installs it once; react-admin's own calls also pass through
 * authProvider.checkError, which does the same.
 */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): void {
  onUnauthorized = handler;
}

export type HttpClient = <T = unknown>(url: string, options?: RequestOptions) => Promise<Envelope<T>>;

/** Base address from the build (VITE_SERVER); empty means same origin. */
const serverBase = (import.meta.env?.VITE_SERVER as string | undefined) ?? '';

/** The one fetch: same-origin credentials (the session cookie), JSON in and out, a network failure as HttpError status 0. */
async function send(
  url: string,
  init: { method?: string; body?: string; headers?: HeadersInit; signal?: AbortSignal | null },
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Accept', 'application/json');
  if (init.body !== undefined && !headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
  try {
    return await fetch(serverBase + url, {
      method: init.method ?? 'GET',
      credentials: 'same-origin',
      headers,
      body: init.body,
      signal: init.signal ?? undefined,
    });
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') throw error;
    // the browser's own words ("Failed to fetch", "NetworkError when...") differ per browser and are never translated
    throw new HttpError('app.errors.network', 0, { cause: (error as Error)?.message || String(error) });
  }
}

async function readJson<T>(response: Response): Promise<T | undefined> {
  try {
    return (await response.json()) as T;
  } catch {
    return undefined;
  }
}

/** The HttpError for a refused call: a known code translated, fixed statuses by their meaning, otherwise the server's words. */
function refusal(response: Response, envelope: Envelope | undefined): HttpError {
  if (response.status === 401) onUnauthorized();
  const fixed = codedMessage(envelope) ?? STATUS_MESSAGES[response.status];
  const message =
    fixed ??
    (response.status === 401
      ? (envelope?.message ?? 'ra.auth.auth_check_error')
      : `Error: ${envelope?.message || response.statusText || `HTTP ${response.status}`}`);
  return new HttpError(message, response.status, envelope);
}

export const httpClient: HttpClient = async <T>(url: string, options: RequestOptions = {}) => {
  const response = await send(url, {
    method: options.method,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const envelope = await readJson<Envelope<T>>(response);
  if (!response.ok) throw refusal(response, envelope);
  if (!envelope || typeof envelope !== 'object') {
    throw new HttpError('app.errors.request_failed', response.status);
  }
  // Some one-api endpoints answer without an envelope (e.g. /api/channel/models).
  if (!('success' in envelope)) return { success: true, message: '', data: envelope as unknown as T };
  if (!envelope.success)
    throw new HttpError(codedMessage(envelope) ?? (envelope.message || 'app.errors.request_failed'), response.status, envelope);
  return envelope;
};

/** What ra-data-simple-rest expects of its HTTP client (react-admin's fetchUtils.fetchJson shape). */
export type RestClient = (
  url: string,
  options?: { method?: string; body?: string | FormData; headers?: HeadersInit; signal?: AbortSignal | null },
) => Promise<{ status: number; headers: Headers; body: string; json: unknown }>;

/**
 * The same fetch for the resources in ra-data-simple-rest's convention
 * (bare JSON records and arrays, Content-Range on lists): answers are handed
 * back whole; refusals (which keep the envelope) become the same HttpErrors.
 */
export const restClient: RestClient = async (url, options = {}) => {
  const response = await send(url, {
    method: options.method,
    body: typeof options.body === 'string' ? options.body : undefined,
    headers: options.headers,
    signal: options.signal,
  });
  const body = await response.text();
  let json: unknown;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) throw refusal(response, json && typeof json === 'object' && 'success' in json ? (json as Envelope) : undefined);
  return { status: response.status, headers: response.headers, body, json };
};
