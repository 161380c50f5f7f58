// The fields of a relay body the gateway itself reads (to route, price and
// reserve), checked before anything is reserved. The body still goes upstream
// untouched: fields the gateway does not read are the provider's business.
// Plain typeof checks, no schema compiler: this runs on every relayed call.
import type { RelayError } from './errors';
import { MAX_TOKENS_LIMIT } from '../protocols/shared';

/** Far above any model's output limit, far below what could overflow a reservation (kept with the protocols, whose codecs check it too). */
export { MAX_TOKENS_LIMIT };

/** abilities.model and logs.model_name are varchar(128). */
export const MODEL_NAME_MAX = 128;
export const N_MAX = 128;

function invalid(param: string, message: string): RelayError {
  return { status: 400, message, type: 'invalid_request_error', code: 'invalid_value', param };
}

const absent = (value: unknown) => value === undefined || value === null;

/** Why a model name cannot be used, if it cannot (a body's `model`, a path's `:model`, a form field). */
export function modelNameProblem(model: string, param = 'model'): RelayError | undefined {
  if (model.length > MODEL_NAME_MAX) return invalid(param, `${param} must be at most ${MODEL_NAME_MAX} characters`);
  if (model.includes('\u0000')) return invalid(param, `${param} must not contain NUL characters`);
  return undefined;
}

/** An output limit the gateway reserves by: chat's two names, and Responses' `max_output_tokens`. */
function tokenLimitProblem(
  body: Record<string, unknown>,
  param: 'max_tokens' | 'max_completion_tokens' | 'max_output_tokens',
): RelayError | undefined {
  const value = body[param];
  if (absent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOKENS_LIMIT) {
    return invalid(param, `${param} must be an integer from 0 to ${MAX_TOKENS_LIMIT}`);
  }
  return undefined;
}

/** The first field the gateway reads that has the wrong type or is out of range, as an OpenAI-shaped 400. */
export function relayFieldProblem(body: Record<string, unknown>): RelayError | undefined {
  const { model, n, stream } = body;
  // completions' best_of: the vendor generates (and bills) that many candidates, so the hold multiplies by it as by n
  const bestOf = body.best_of;
  if (!absent(model)) {
    if (typeof model !== 'string') return invalid('model', 'model must be a string');
    const problem = modelNameProblem(model);
    if (problem) return problem;
  }
  const limit =
    tokenLimitProblem(body, 'max_tokens') ??
    tokenLimitProblem(body, 'max_completion_tokens') ??
    tokenLimitProblem(body, 'max_output_tokens');
  if (limit) return limit;
  const count = answerCountProblem('n', n) ?? answerCountProblem('best_of', bestOf);
  if (count) return count;
  if (!absent(stream) && typeof stream !== 'boolean') return invalid('stream', 'stream must be a boolean');
  return streamOptionsProblem(body.stream_options);
}

/** An answer count (n, best_of) that is not an integer from 1 to N_MAX, when given. */
function answerCountProblem(param: 'n' | 'best_of', value: unknown): RelayError | undefined {
  if (!absent(value) && (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > N_MAX))
    return invalid(param, `${param} must be an integer from 1 to ${N_MAX}`);
  return undefined;
}

/** What is wrong with a request's stream_options, when it has them. */
function streamOptionsProblem(streamOptions: unknown): RelayError | undefined {
  if (absent(streamOptions)) return undefined;
  if (typeof streamOptions !== 'object' || Array.isArray(streamOptions))
    return invalid('stream_options', 'stream_options must be an object');
  const includeUsage = (streamOptions as { include_usage?: unknown }).include_usage;
  if (!absent(includeUsage) && typeof includeUsage !== 'boolean')
    return invalid('stream_options.include_usage', 'stream_options.include_usage must be a boolean');
  return undefined;
}
