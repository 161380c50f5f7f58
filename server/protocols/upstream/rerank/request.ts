// The request each rerank shape takes. The relay holds the documents as
// strings (Cohere's v2 takes nothing else) and fills the answer's documents
// in itself, so no vendor is asked to send them back.
import type { RerankWire } from '../../../../common/channelTypes';
import type { RerankRequest } from '../../types';

/** Cohere's v2 options the relay passes on, when the client set them with the right type. */
const COHERE_OPTIONS: Readonly<Record<string, 'number' | 'boolean'>> = { max_tokens_per_doc: 'number' };

/** Voyage's options the relay passes on. */
const VOYAGE_OPTIONS: Readonly<Record<string, 'number' | 'boolean'>> = { truncation: 'boolean' };

/** The client's options a strict vendor documents, of the type it documents; any other is left out (it would refuse it). */
function documentedOptions(
  extra: Record<string, unknown>,
  documented: Readonly<Record<string, 'number' | 'boolean'>>,
): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(documented)) if (typeof extra[name] === type) options[name] = extra[name];
  return options;
}

/** The body of a rerank for a vendor of `wire`, for the model the channel expects. */
export function encodeRerankRequest(wire: RerankWire, request: RerankRequest, model: string): string {
  const { query, documents, top_n: topN } = request;
  switch (wire) {
    case 'cohere':
      return JSON.stringify({
        model,
        query,
        documents,
        ...(topN !== undefined ? { top_n: topN } : {}),
        ...documentedOptions(request.extra, COHERE_OPTIONS),
      });
    case 'voyage':
      return JSON.stringify({
        model,
        query,
        documents,
        ...(topN !== undefined ? { top_k: topN } : {}),
        ...documentedOptions(request.extra, VOYAGE_OPTIONS),
      });
    case 'jina':
      // servers of this shape take options of their own (SiliconFlow's max_chunks_per_doc, Jina's truncation): they pass
      return JSON.stringify({
        ...request.extra,
        model,
        query,
        documents,
        ...(topN !== undefined ? { top_n: topN } : {}),
        return_documents: false,
      });
  }
}
