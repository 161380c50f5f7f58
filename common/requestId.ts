// The exchange's request id: the client's X-Request-Id (when it is a sane one)
// or one the gateway made as the request arrived. It is echoed in the answer,
// sent upstream, named in the server log and in the errors a client reads.

export const REQUEST_ID_HEADER = 'x-request-id';

/** The id an exchange was given (the gateway sets it on every request that reaches the relay). */
export const requestIdOf = (headers: Readonly<Record<string, string | string[] | undefined>>): string =>
  headers[REQUEST_ID_HEADER] as string;
