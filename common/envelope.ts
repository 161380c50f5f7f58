/**
 * The console API's response shape. Every `/api/*` route answers with it,
 * failures included (HTTP 200 with `success: false`, except 401/403/404/429
 * where the status carries meaning of its own).
 */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
}

/** Builds a success envelope. */
export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/** Builds a failure envelope. */
export function fail(message: string): Envelope<never> {
  return { success: false, message };
}
