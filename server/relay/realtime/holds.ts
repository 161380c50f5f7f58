// A realtime response's money: the bound held for it as it starts (at the
// prices in force then), its settlement at the usage it reports, or its hold
// given back when it never became a response.
import { admitModel, release, settleLater, type Admission } from '../../billing/accounting';
import { catalogMaxOutputTokens, contextWindowFor } from '../../billing/catalog';
import { completionRatioFor } from '../../billing/prices';
import { realtimeBound, realtimeCharge, realtimeRatios } from '../../billing/realtimePrices';
import type { Reservation } from '../../billing/quota';
import type { RealtimeUsage } from '../../protocols/upstream/realtime';
import type { RelayContext } from '../context';
import { isRelayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';

/** Output tokens held for a response when neither the client nor the catalog gives a limit. */
const DEFAULT_OUTPUT_BOUND = 4096;
/** The input held for a response when the catalog knows no context window. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

/** One response's hold and what it was asked with. */
export interface Hold {
  admission: Admission;
  reservation: Reservation;
  /** The client's event_id of its response.create, when it gave one: an error about it gives the hold back. */
  eventId?: string;
  closed: boolean;
}

/** The largest response a session holds for: the client's limit, else the catalog's, else DEFAULT_OUTPUT_BOUND. */
const outputBoundOf = (model: string, limit: number | undefined) => limit ?? catalogMaxOutputTokens(model) ?? DEFAULT_OUTPUT_BOUND;

/**
 * What one response is held for at the prices in force now: its input (the
 * conversation's tokens, at most the model's context window) and its output
 * limit; a refusal when the model is not admitted.
 */
export function responseBound(
  ctx: RelayContext,
  caller: RelayCaller,
  model: string,
  requestId: string,
  inputTokens: number,
  outputLimit: number | undefined,
): { admission: Admission; amount: number } | RelayError {
  const admission = admitModel(ctx, caller, model, requestId);
  if (isRelayError(admission)) return admission;
  const ratios = realtimeRatios(admission, completionRatioFor(model, ctx.options.json('CompletionRatio')));
  const input = Math.min(contextWindowFor(model) ?? DEFAULT_CONTEXT_WINDOW, inputTokens);
  const amount = realtimeBound(ratios, input, outputBoundOf(model, outputLimit));
  return { admission, amount };
}

/** Settles a hold at a usage: the upstream's report, or (estimated) the gateway's count of a response cut off. */
export function settleHold(
  ctx: RelayContext,
  model: string,
  channelId: number,
  hold: Hold,
  usage: RealtimeUsage,
  how: { detail: string; estimated?: boolean },
): void {
  if (hold.closed) return;
  hold.closed = true;
  const ratios = realtimeRatios(hold.admission, completionRatioFor(model, ctx.options.json('CompletionRatio')));
  const { charge, formula } = realtimeCharge(ratios, usage);
  settleLater(
    ctx,
    hold.admission,
    hold.reservation,
    {
      channelId,
      charge,
      promptTokens: usage.inputTokens,
      completionTokens: usage.outputTokens,
      isStream: true,
      estimated: how.estimated === true,
      detail: how.detail,
      formula,
    },
    { protocol: 'openai', operation: 'realtime' },
  );
}

/** Gives a hold back whole, once. */
export async function giveBackHold(ctx: RelayContext, hold: Hold): Promise<void> {
  if (hold.closed) return;
  hold.closed = true;
  await release(ctx, hold.reservation);
}
