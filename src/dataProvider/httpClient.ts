// The only place the console calls fetch. It unwraps the {success, message,
// data} envelope, and turns every failure into a react-admin HttpError whose
// message follows the spec's error catalogue, so all screens report errors
// the same way.
import { HttpError } from 'react-admin';
import type { Envelope } from '../../common/envelope';
import { isMessageCode } from '../../common/messageCodes';

/** Message keys for statuses with a fixed meaning (spec §8); translated where shown. */
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
 * What to do when any call answers 401 (spec §2: go to /login?expired=true).
 * The app installs it once; react-admin's own calls also pass through
 * authProvider.checkError, which does the same.
 */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): void {
  onUnauthorized = handler;
}

export type HttpClient = <T = unknown>(url: string, options?: RequestOptions) => Promise<Envelope<T>>;

/** Base address from the build (VITE_SERVER); empty means same origin. */
const serverBase = (import.meta.env?.VITE_SERVER as string | undefined) ?? '';

export const httpClient: HttpClient = async <T,>(url: string, options: RequestOptions = {}) => {
  let response: Response;
  try {
    response = await fetch(serverBase + url, {
      method: options.method ?? 'GET',
      credentials: 'same-origin',
      headers: options.body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') throw error;
    // the browser's own words ("Failed to fetch", "NetworkError when...") differ per browser and are never translated
    throw new HttpError('app.errors.network', 0, { cause: (error as Error)?.message || String(error) });
  }

  let envelope: Envelope<T> | undefined;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    envelope = undefined;
  }

  if (!response.ok) {
    if (response.status === 401) onUnauthorized();
    const fixed = codedMessage(envelope) ?? STATUS_MESSAGES[response.status];
    const message = fixed ?? (response.status === 401 ? envelope?.message ?? 'ra.auth.auth_check_error' : `Error: ${envelope?.message || response.statusText || `HTTP ${response.status}`}`);
    throw new HttpError(message, response.status, envelope);
  }
  if (!envelope || typeof envelope !== 'object') {
    throw new HttpError('app.errors.request_failed', response.status);
  }
  // Some one-api endpoints answer without an envelope (e.g. /api/channel/models).
  if (!('success' in envelope)) return { success: true, message: '', data: envelope as unknown as T };
  if (!envelope.success) throw new HttpError(codedMessage(envelope) ?? (envelope.message || 'app.errors.request_failed'), response.status, envelope);
  return envelope;
};
