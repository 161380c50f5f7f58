// Rerank, in the three shapes vendors speak it (common/channelTypes.ts
// `RerankWire`): Jina's (also SiliconFlow's and what OpenAI-compatible
// servers such as vLLM, TEI and Xinference answer), Cohere's v2 and Voyage's.
// A channel type's row names its shape and path; these are the pure codecs
// the OpenAI-wire adaptor calls for it. References:
// https://api.jina.ai/redoc#tag/rerank, https://docs.cohere.com/reference/rerank,
// https://docs.voyageai.com/reference/reranker-api
export { encodeRerankRequest } from './request';
export { decodeRerankAnswer } from './json';
