// Zhipu's failures: an `error: {code, message}` (v4) or `success: false` (v3)
// body, read by its business code.
import type { UpstreamFailure } from '../../types';
import { isObject, parseJson, upstreamFailure } from '../../shared';
import { text } from './json';

// ---- failures ----

interface CodeMeaning {
  status: number;
  deadKey?: boolean;
  retryable?: boolean;
  type?: string;
}

/** Zhipu's business codes (https://docs.bigmodel.cn/cn/api/api-code), by what they mean for routing. */
const CODE_MEANINGS: ReadonlyArray<readonly [readonly number[], CodeMeaning]> = [
  // the key itself is refused, or the account behind it is inactive, missing, locked or in arrears
  [[1000, 1002, 1004], { status: 401, deadKey: true, type: 'authentication_error' }],
  [[1110, 1111, 1112, 1121], { status: 403, deadKey: true, type: 'account_error' }],
  [[1113, 1309], { status: 429, deadKey: true, type: 'insufficient_quota' }],
  // a missing header or an expired JWT is the sender's doing, not the key's
  [[1001, 1003], { status: 401, retryable: true, type: 'authentication_error' }],
  [[1301], { status: 400, retryable: false, type: 'content_filter' }],
  // concurrency, frequency, daily and plan limits, an overloaded model: another channel may answer
  [[1302, 1303, 1304, 1305, 1308, 1310, 1312, 1313], { status: 429, retryable: true, type: 'rate_limit_error' }],
  [[1211, 1220, 1221, 1222, 1311], { status: 404, retryable: true, type: 'model_error' }],
  [[1210, 1212, 1213, 1214, 1215, 1261, 1231], { status: 400, retryable: false, type: 'invalid_request_error' }],
  [[500, 1100, 1120, 1200, 1230, 1234], { status: 500, retryable: true, type: 'server_error' }],
];

const MEANING_BY_CODE = new Map(CODE_MEANINGS.flatMap(([codes, meaning]) => codes.map((code) => [code, meaning] as const)));

/** What a business code means for routing; undefined for a code not listed. */
const meaningOf = (code: number): CodeMeaning | undefined => MEANING_BY_CODE.get(code);

/** A failure from Zhipu's code and message; `status` is the HTTP status (200 for an error inside a 2xx). */
function zhipuFailure(status: number, code: unknown, message: string): UpstreamFailure {
  const number = Number(code);
  const meaning = Number.isInteger(number) ? meaningOf(number) : undefined;
  const httpStatus = status >= 400 ? status : (meaning?.status ?? 500);
  return upstreamFailure(httpStatus, message, {
    type: meaning?.type ?? 'zhipu_error',
    code: code === undefined || code === null || code === '' ? null : (code as string | number),
    deadKey: meaning?.deadKey ?? false,
    retryable: meaning?.retryable,
  });
}

/** The failure an answer body describes, or undefined when it describes none. */
export function failureIn(status: number, body: unknown): UpstreamFailure | undefined {
  if (!isObject(body)) return undefined;
  if (isObject(body.error)) return zhipuFailure(status, body.error.code, text(body.error.message));
  // v3's envelope: success false with a code and msg
  if (body.success === false) return zhipuFailure(status, body.code, text(body.msg) || text(body.message));
  return undefined;
}

export function classify(status: number, bodyText: string): UpstreamFailure {
  const found = failureIn(status, parseJson(bodyText));
  if (found) return found;
  return upstreamFailure(status, bodyText.trim().slice(0, 500) || `Zhipu answered HTTP ${status}`, { type: 'zhipu_error' });
}
