// POST /v1/rerank: Cohere's and Jina's rerank, one client shape for both
// (server/protocols/inbound/rerank.ts), relayed to any channel whose type
// names a rerank endpoint (common/channelTypes.ts `rerank`: Cohere, Jina,
// Voyage, SiliconFlow, OpenAI Compatible and Custom), each in its vendor's
// shape. A declaration into the relay pipeline (server/relay/pipeline.ts):
// auth, limits, the key's model list, the price, the hold, routing with
// retries, settlement, the log and the metrics are the pipeline's.
//
// Price, as the vendor counts (server/billing/prices.ts):
// - by the token (Jina, Voyage, SiliconFlow...): the tokens the vendor
//   reported x the model's ratio (all prompt); a vendor that reports none is
//   billed the gateway's own count, marked estimated;
// - by the search unit (Cohere): floor(ratio x 1000) per unit it billed.
// Held before the call: the larger of the token bound (the query once per
// document and every document, a token per byte at most) and one search unit
// per 100 documents, both at the model's ratio.
import { openaiChat } from '../../protocols/inbound';
import {
  readRerankRequest,
  rerankAnswer,
  rerankSearchUnitBound,
  rerankTokenBound,
  rerankTokenCount,
  type RerankBilled,
  type RerankRead,
} from '../../protocols/inbound/rerank';
import { searchUnitCharge, tokenCharge, type Bill } from '../../billing/accounting';
import { computeQuota, searchUnitQuota } from '../../billing/prices';
import { modelOf } from '../../relay/intake';
import { relayError, type RelayError } from '../../relay/errors';
import { modelNameProblem } from '../../relay/requestFields';
import type { RelayDeclaration, RelayRoute } from '../../relay/pipeline';

const HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };

interface RerankState {
  read: RerankRead;
  /** The most tokens a vendor can count for it. */
  tokenBound: number;
}

export const rerank: RelayRoute<RerankState> = {
  operation: 'rerank',
  inbound: openaiChat,
  body: 'json',

  read(call): RerankState | RelayError {
    const model = modelOf(call.body);
    const badName = model ? modelNameProblem(model) : undefined;
    if (badName) return badName;
    const read = readRerankRequest(call.body, model);
    if ('param' in read) return { ...relayError(400, read.message, read.code), param: read.param };
    call.model = model;
    return { read, tokenBound: rerankTokenBound(read.request) };
  },

  price(call) {
    const { ratio } = call.admission;
    const byTokens = computeQuota({ promptTokens: call.state.tokenBound, completionTokens: 0, ratio, completionRatio: 1 });
    return Math.max(byTokens, searchUnitQuota(ratio, rerankSearchUnitBound(call.state.read.request)));
  },

  tokenEstimate: (call) => call.state.tokenBound,

  upstream(call) {
    const { body, model, state } = call;
    return {
      operation: 'rerank',
      json: body,
      rerank: state.read.request,
      query: call.input.query,
      requestId: call.admission.requestId,
      model,
      path: '/v1/rerank',
      headers: HEADERS,
      // never sent as it is (a rerank is always encoded for its vendor): what a Jina-shaped vendor would get
      body: (upstreamModel) => JSON.stringify({ ...body, model: upstreamModel }),
      signal: call.signal,
    };
  },

  answer(call, answer) {
    const decoded = answer.translated?.rerank;
    if (!decoded)
      return relayError(
        502,
        `the upstream's rerank answer could not be read (request id ${answer.requestId})`,
        'bad_upstream_answer',
        'server_error',
      );
    const { admission, state, response } = call;
    const { request } = state.read;
    let billed: RerankBilled;
    let charged: Pick<Bill, 'charge' | 'pricing' | 'formula' | 'detail'>;
    let estimated: boolean;
    if (decoded.billedBy === 'search_units') {
      estimated = decoded.searchUnits === undefined && decoded.searchUnitsByRule !== true;
      const units = decoded.searchUnits ?? rerankSearchUnitBound(request);
      billed = { searchUnits: units };
      charged = searchUnitCharge(admission, units);
    } else {
      estimated = decoded.tokens === undefined;
      const tokens =
        decoded.tokens ?? rerankTokenCount(request, call.model, { approximate: call.ctx.options.bool('ApproximateTokenEnabled') });
      billed = { tokens };
      charged = tokenCharge(admission, { promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0 }, 1);
    }
    const body = JSON.stringify(
      rerankAnswer(decoded, state.read, { id: `rerank-${answer.requestId.replace(/[^A-Za-z0-9]/g, '')}`, model: call.model, billed }),
    );
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
    call.settle({
      channelId: answer.channel.id,
      ...charged,
      promptTokens: 'tokens' in billed ? billed.tokens : 0,
      completionTokens: 0,
      isStream: false,
      estimated,
    });
    return undefined;
  },
};

export const RERANK_ROUTES: readonly RelayDeclaration[] = [{ path: '/v1/rerank', route: rerank }];
