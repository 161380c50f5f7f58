import type { MessageCode } from './messageCodes';

/**
 * The console API's response shape. Every `/api/*` route answers with it,
 * failures included (HTTP 200 with `success: false`, except 401/403/404/429
 * where the status carries meaning of its own).
 */
export interface Envelope<T = unknown> {
  success: boolean;
  /** English, for one-api clients and logs; the console translates by `code` when there is one. */
  message: string;
  data?: T;
  /** On refusals the console commonly shows: a stable {@link MessageCode} to translate. */
  code?: MessageCode;
}

/** Builds a success envelope. */
export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/** Builds a failure envelope; `code` when the refusal is one the console translates. */
export function fail(message: string, code?: MessageCode): Envelope<never> {
  return code === undefined ? { success: false, message } : { success: false, message, code };
}
