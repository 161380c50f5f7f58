// The error a relayed request answers with: OpenAI's error object, and the
// HTTP status that goes with it. Every part of the gateway that refuses a
// relayed request (intake, billing, the adaptors' failures) speaks it.

export interface RelayError {
  status: number;
  message: string;
  type: string;
  code: string | number | null;
  param?: string | null;
  /** Seconds after which trying again may succeed (the Retry-After header). */
  retryAfter?: number;
}

export const relayError = (status: number, message: string, code: string | null = null, type = 'invalid_request_error'): RelayError => ({
  status,
  message,
  type,
  code,
});

export const isRelayError = (value: unknown): value is RelayError =>
  typeof value === 'object' && value !== null && 'status' in value && 'message' in value && 'type' in value;
