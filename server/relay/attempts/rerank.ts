// A rerank answer, read whole from the channel: every rerank is encoded by the
// channel's adaptor (the vendors' shapes differ on one wire), and its answer
// decoded by it. One entry point, rerankAttempt, which the translated path calls.
import { upstreamFailure } from '../../protocols/shared';
import { isUpstreamFailure, type AdaptorCall, type UpstreamAdaptor } from '../../protocols/types';
import type { Attempt, TranslatedAnswer } from '../attempt';

/** A whole rerank answer decoded by the channel's adaptor: answered, or the failure it holds. */
export function rerankAttempt(
  adaptor: UpstreamAdaptor,
  text: string,
  call: AdaptorCall,
  answered: (translatedAnswer: TranslatedAnswer) => Attempt,
): Attempt {
  if (!adaptor.decodeRerank)
    return {
      outcome: 'failed',
      failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot decode rerank`, { retryable: true }),
    };
  const decoded = adaptor.decodeRerank(text, call);
  return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, rerank: decoded });
}
