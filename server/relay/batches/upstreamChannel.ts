// The channel a new batch's lines would use, chosen when it is created the
// way the relay chooses one for a line (channelSelect.ts: the caller's group
// and pinned channel, the highest priority, by weight), and the vendor's batch
// price. An OpenAI, Azure OpenAI or Gemini channel runs the batch at the vendor
// (batchObject.ts batchModeFor), and the task keeps its id.
import { selectChannel } from '../channelSelect';
import type { RelayContext } from '../context';
import type { CandidateChannel } from '../relayCache';
import type { RelayCaller } from '../tokenAuth';

/** The channel a batch of `model` would run on for `caller`, or undefined when none serves it. */
export async function batchChannelFor(ctx: RelayContext, caller: RelayCaller, model: string): Promise<CandidateChannel | undefined> {
  const found = selectChannel(ctx.db, caller.user.group, model, { exclude: [], pinnedChannelId: caller.pinnedChannelId, cache: ctx.cache });
  return found instanceof Promise ? await found : found;
}

/**
 * The share of the normal price a vendor bills for a line run by its Batch
 * API. The catalog has no batch price of its own for any model yet, so it is
 * OpenAI's, Azure's and Gemini's batch price today for every model: half.
 */
export function vendorBatchShare(_model: string): number {
  return 0.5;
}
