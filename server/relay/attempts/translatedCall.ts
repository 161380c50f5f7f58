// A translated call as its transports see it (translated.ts prepares it,
// translatedHttp.ts and translatedWebSocket.ts send it): what was encoded and
// for whom, how a refusal and an answer are made, and the decoding of a whole
// answer they share.
import { Readable } from 'node:stream';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatResponse,
  type ChatStreamDecoder,
  type EmbeddingResponse,
  type HttpTarget,
  type Operation,
  type UpstreamAdaptor,
} from '../../protocols/types';
import type { Attempt, AttemptDeps, TranslatedAnswer, UpstreamRequest } from '../attempt';
import { rerankAttempt } from './rerank';

/** A translated call made ready: the adaptor's call, where to send it, the encoded body, and how to read a refusal. */
export interface PreparedCall {
  adaptor: UpstreamAdaptor;
  operation: Operation;
  config: ChannelConfig;
  call: AdaptorCall;
  target: HttpTarget;
  body: string;
  /** The client asked for a stream. */
  clientStreams: boolean;
  request: UpstreamRequest;
  deps: AttemptDeps;
  /** A refusal of the call. A 401 drops the credential from the cache; when it came from there, translated() retries once. */
  refused: (status: number, body: string) => Attempt;
  /** The attempt that answers with this translated answer. */
  answered: (translatedAnswer: TranslatedAnswer) => Attempt;
}

/** What a transport gives back: an attempt already decided, or a stream to read (and the decoder of a followed one). */
export type TransportResult = Attempt | { source: Readable; decoder?: ChatStreamDecoder };

/** A whole answer decoded for the operation asked: answered, or the failure it holds. */
export function decodeWhole(prepared: PreparedCall, text: string): Attempt {
  const { adaptor, operation, call } = prepared;
  if (operation === 'rerank') return rerankAttempt(adaptor, text, call, prepared.answered);
  const decoded = operation === 'embeddings' ? adaptor.decodeEmbeddings!(text, call) : adaptor.decodeChat(text, call);
  if (isUpstreamFailure(decoded)) return { outcome: 'failed', failure: decoded };
  return prepared.answered(
    operation === 'embeddings'
      ? { adaptor, call, embeddings: decoded as EmbeddingResponse }
      : { adaptor, call, chat: decoded as ChatResponse },
  );
}

/** The source of a stream that came whole: nothing more to read. */
export const emptySource = () => Readable.from([]);
