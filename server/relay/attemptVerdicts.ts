// What an attempt's failure means: for the client (the error it hears), the
// metrics (its kind), the routing book (the verdict on the channel) and the
// dispatch (whether another channel may answer). dispatch.ts reads these.
import type { UpstreamFailure } from '../protocols/types';
import { DEFAULT_RETRYABLE_STATUSES, parseStatusList } from '../../common/routing';
import type { UpstreamErrorKind } from '../services/metrics';
import type { OptionStore } from '../services/optionStore';
import type { Attempt } from './attempt';
import { relayError, unreachableRelayError, type RelayError } from './errors';
import type { AttemptVerdict } from './routing';
import { AnswerBrokeOff, isUpstreamTimeout, UpstreamBusy } from './upstream';
import { WebSocketTimeout } from './websocketUpstream';

/** What the client hears when no upstream answered, by the last failure: no address or detail (those go to the log), the request id. */
export function unansweredError(error: unknown, requestId: string): RelayError {
  if (error instanceof UpstreamBusy)
    return relayError(503, `the upstream is busy, please retry later (request id ${requestId})`, 'upstream_busy', 'server_error');
  const timedOut = error instanceof AnswerBrokeOff ? error.timedOut : error instanceof WebSocketTimeout || isUpstreamTimeout(error);
  if (timedOut) return relayError(504, `the upstream timed out (request id ${requestId})`, 'upstream_timeout', 'server_error');
  return unreachableRelayError(error instanceof AnswerBrokeOff, requestId);
}

/** The metrics' kind of an upstream that never answered, by the same reading as unansweredError. */
export function unansweredKind(error: unknown): UpstreamErrorKind {
  if (error instanceof UpstreamBusy) return 'busy';
  const timedOut = error instanceof AnswerBrokeOff ? error.timedOut : error instanceof WebSocketTimeout || isUpstreamTimeout(error);
  if (timedOut) return 'timeout';
  return error instanceof AnswerBrokeOff ? 'broke_off' : 'network';
}

/** A refusal's kind, for the metrics. */
export function failureKind(failure: UpstreamFailure): 'dead_key' | 'rate_limited' | 'server_error' | 'client_error' {
  if (failure.deadKey) return 'dead_key';
  if (failure.status === 429) return 'rate_limited';
  return failure.status >= 500 ? 'server_error' : 'client_error';
}

/** The RetryableStatusCodes option parsed, by its text. */
let retryableText = '';
let retryableTest: (status: number) => boolean = () => false;
function retryableStatus(options: OptionStore, status: number): boolean {
  const text = options.get('RetryableStatusCodes');
  if (text !== retryableText) {
    retryableTest = parseStatusList(text) ?? parseStatusList(DEFAULT_RETRYABLE_STATUSES)!;
    retryableText = text;
  }
  return retryableTest(status);
}

/**
 * Whether a failure sends the request on to another channel: a dead key
 * always does; a status the operator lists as retryable does; and a 4xx the
 * adaptor says another channel may take (a request this vendor's format
 * cannot carry) does whatever the list, since the list is about upstream
 * answers and that one never reached an upstream.
 */
export function goesOn(options: OptionStore, failure: UpstreamFailure): boolean {
  if (failure.deadKey || retryableStatus(options, failure.status)) return true;
  return failure.retryable && failure.status < 500 && failure.status !== 429;
}

/** What an attempt says of its channel: a 429 or an overload rests it, a 5xx or no answer counts toward its breaker. */
export function verdictOf(result: Attempt): AttemptVerdict {
  switch (result.outcome) {
    case 'answered':
      return 'answered';
    case 'aborted':
      return 'neutral';
    case 'unanswered':
      // the gateway's own pool queue was full: that says nothing of the channel
      return result.error instanceof UpstreamBusy ? 'neutral' : 'failed';
    case 'failed': {
      const { failure } = result;
      if (failure.deadKey) return 'neutral';
      if (
        failure.status === 429 ||
        failure.status === 529 ||
        (failure.status === 503 && /overload/i.test(`${failure.type ?? ''} ${failure.code ?? ''} ${failure.message}`))
      )
        return 'overloaded';
      return failure.status >= 500 ? 'failed' : 'neutral';
    }
  }
}
