// The money of every relayed request, so each route only says what it
// charges: may this key use this model and at what price (admit), hold the
// most the request can cost (reserve), and after the answer replace the hold
// by the real charge and log it (settle), or give it all back (release).
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { LogType } from '../../common/roles';
import type { OptionKey } from '../../common/options';
import type { LogDetails } from '../../common/records';
import { relayError, type RelayError } from '../../common/relayError';
import type { Database } from '../db/database';
import { databaseChangedNothing, isDatabaseUnavailable } from '../db/faults';
import { balancesOf as readBalances } from '../repositories/balances';
import type { NewLog } from '../repositories/logs';
import type { MemberCapRow } from '../repositories/relayAuth';
import type { TokenRow } from '../repositories/tokens';
import type { UserRow } from '../repositories/users';
import type { Bookkeeping, ChargeListener } from './bookkeeping';
import type { BudgetTracker } from './budgets';
import type { Usage } from '../../common/usage';
import {
  cacheCreationRatioFor,
  cachedPromptRatioFor,
  computeQuota,
  IMAGE_SIZE_RATIO,
  imageQuota,
  imageQuotaFormula,
  modelPrice,
  quotaFormula,
  searchUnitQuota,
  searchUnitQuotaFormula,
  type ChargeInput,
} from './prices';
import type { QuotaLedger, Reservation } from './quota';

/** Who pays for a request: its key and the key's owner (and for a member's key of an organisation, the member's caps). */
export interface Payer {
  token: TokenRow;
  user: UserRow;
  member?: MemberCapRow;
}

/** What the money side reads and writes through; the relay's context is one. */
export interface MoneyContext {
  db: Kysely<Database>;
  options: { bool(key: OptionKey): boolean; json(key: OptionKey): Record<string, number> };
  ledger: QuotaLedger;
  bookkeeping: Bookkeeping;
  /** The budgets that reset: what requests in flight hold against them on this node (budgets.ts). */
  budgets: BudgetTracker;
  log: FastifyBaseLogger;
  newRequestId: () => string;
  /** The low-balance e-mail after a charge (runs off the hot path, never fails the request). */
  remind: (userId: number, charge: number) => void;
  /** The user.balance_low webhook event, after the same batches as remind. */
  balanceLow: (userId: number, charge: number) => void;
  /** Whether a webhook may listen to user.balance_low (cached; true when unknown). */
  balanceLowWanted: () => boolean;
}

export interface Admission<P extends Payer = Payer> {
  caller: P;
  model: string;
  /** modelRatio x groupRatio */
  ratio: number;
  modelRatio: number;
  groupRatio: number;
  /** The CacheReadRatio and CacheWriteRatio options' entries for the model, when the operator set them. */
  cachedPromptRatio?: number;
  cacheCreationRatio?: number;
  startedAt: number;
  /** Unique across nodes: the key of the request's reservation (and its row on PostgreSQL and MySQL). */
  reservationId: string;
  /**
   * The exchange's X-Request-Id (the client's, or made as it arrived): sent upstream, named in the server
   * log and in the errors a client reads, stored in the consume log. Not unique when a client reuses one.
   */
  requestId: string;
}

export function admitModel<P extends Payer>(
  ctx: MoneyContext,
  caller: P,
  model: string,
  requestId = ctx.newRequestId(),
): Admission<P> | RelayError {
  const { options } = ctx;
  if (caller.token.models && !caller.token.models.split(',').includes(model)) {
    return relayError(403, `this API key may not use the model ${model}`, 'model_not_allowed', 'permission_error');
  }
  const price = modelPrice(model, caller.user.group, options.json('ModelRatio'), options.json('GroupRatio'));
  if (!price.known) return relayError(403, price.reason, 'model_price_unset', 'permission_error');
  const cachedPromptRatio = options.json('CacheReadRatio')[model];
  const cacheCreationRatio = options.json('CacheWriteRatio')[model];
  return {
    caller,
    model,
    ratio: price.ratio,
    modelRatio: price.modelRatio,
    groupRatio: price.groupRatio,
    ...(cachedPromptRatio !== undefined ? { cachedPromptRatio } : {}),
    ...(cacheCreationRatio !== undefined ? { cacheCreationRatio } : {}),
    startedAt: Date.now(),
    reservationId: ctx.newRequestId(),
    requestId,
  };
}

export async function reserve(
  ctx: MoneyContext,
  admission: Admission,
  amount: number,
  hint?: { alone?: boolean },
): Promise<Reservation | RelayError> {
  const reservation = reservationOf(admission, amount);
  const overBudget = ctx.budgets.hold(admission.caller.token, admission.caller.user, reservation, admission.caller.member);
  if (overBudget) return overBudget;
  const reserved = await take(ctx, reservation, hint);
  if (reserved.ok) return reservation;
  return insufficientQuota(ctx, reservation, reserved.reason);
}

const reservationOf = ({ caller, reservationId }: Admission, amount: number): Reservation => ({
  id: reservationId,
  userId: Number(caller.user.id),
  tokenId: Number(caller.token.id),
  limitedToken: Number(caller.token.unlimited_quota) !== 1,
  amount,
});

/** Seconds a client is told to wait when the quota it lacks is only held by requests in flight. */
export const HELD_QUOTA_RETRY_AFTER_SECONDS = 2;

/**
 * The refusal of a reservation. When the user or token that refused has quota
 * held by requests in flight, those may give some back: the answer says when
 * to try again.
 */
export async function insufficientQuota(ctx: MoneyContext, reservation: Reservation, reason: 'user' | 'token'): Promise<RelayError> {
  const error = relayError(
    429,
    reason === 'user' ? 'your account quota is insufficient' : 'the quota of this API key is insufficient',
    'insufficient_quota',
    'insufficient_quota',
  );
  const balances = await balancesOf(ctx, reservation).catch(() => undefined);
  const held = reason === 'user' ? balances?.userHeld : balances?.tokenHeld;
  if (held !== undefined && held > 0) error.retryAfter = HELD_QUOTA_RETRY_AFTER_SECONDS;
  return error;
}

/**
 * What the user, and a limited token, have and hold right now: read only off the hot path, when a reservation was
 * refused. A reservation fits in the balance or in what this node's ledger holds free for the payer (a quota
 * lease), whichever is larger.
 */
export async function balancesOf(ctx: MoneyContext, reservation: Pick<Reservation, 'userId' | 'tokenId' | 'limitedToken'>) {
  const balances = await readBalances(ctx.db, reservation);
  const free = ctx.ledger.freeFor?.(reservation) ?? 0;
  return free > balances.available ? { ...balances, available: free } : balances;
}

/**
 * Holds what a request with a lowered output limit costs: the most tokens per
 * answer the balance pays for, re-read now, if that is at least
 * MIN_LOWERED_OUTPUT_TOKENS. The caller forwards that limit as max_tokens.
 */
export async function reserveLowered(
  ctx: MoneyContext,
  admission: Admission,
  price: (outputTokens: number) => number,
  affordable: (available: number) => number,
  hint?: { alone?: boolean },
): Promise<{ reservation: Reservation; outputTokens: number } | undefined> {
  const balances = await balancesOf(ctx, reservationOf(admission, 0));
  const outputTokens = affordable(balances.available);
  if (outputTokens <= 0) return undefined;
  const reservation = reservationOf(admission, price(outputTokens));
  if (ctx.budgets.hold(admission.caller.token, admission.caller.user, reservation, admission.caller.member)) return undefined;
  const reserved = await take(ctx, reservation, hint);
  return reserved.ok ? { reservation, outputTokens } : undefined;
}

/**
 * The ledger's reservation, after its budgets' hold; a refusal or failure gives that hold back. One whose outcome a
 * broken connection left unknown is undone once the database answers.
 */
async function take(ctx: MoneyContext, reservation: Reservation, hint?: { alone?: boolean }) {
  try {
    const reserved = await ctx.ledger.reserve(reservation, hint);
    if (!reserved.ok) ctx.budgets.release(reservation);
    return reserved;
  } catch (error) {
    ctx.budgets.release(reservation);
    if (isDatabaseUnavailable(error) && !databaseChangedNothing(error)) forgetAmbiguousReservation(ctx, reservation);
    throw error;
  }
}

/**
 * A reservation whose connection broke may still have committed (the COMMIT
 * went through, its answer was lost). Where each reservation is a row of its
 * own, keyed by the request's id, a release is applied only if that row
 * exists: queued like a release during an outage, it gives back exactly what
 * was taken, or nothing. Without such rows a release could give back what was
 * never taken, so the hold stays on record and is said so in the log.
 */
function forgetAmbiguousReservation(ctx: MoneyContext, reservation: Reservation): void {
  if ((reservation as { id?: unknown }).id !== undefined) {
    ctx.bookkeeping.settle({ reservation, charge: 0, channelId: 0, countRequest: false });
  } else {
    ctx.log.warn({ reservation }, 'a reservation failed with its connection and may have been taken; it stays held');
  }
}

/**
 * Gives a reservation back. When the database is unreachable just then, the
 * release goes into the settlement queue as a settlement that charges nothing,
 * which is written once the database is back, so the hold is not left behind
 * (when the release may have been applied already, only where that settlement
 * is idempotent: see forgetAmbiguousReservation).
 */
export async function release(ctx: MoneyContext, reservation: Reservation): Promise<void> {
  ctx.budgets.release(reservation);
  try {
    await ctx.ledger.release(reservation);
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    if (databaseChangedNothing(error) || (reservation as { id?: unknown }).id !== undefined) {
      ctx.log.warn({ err: error }, 'database unavailable: the release waits in the settlement queue');
      ctx.bookkeeping.settle({ reservation, charge: 0, channelId: 0, countRequest: false });
    } else {
      // the release may have been applied just before its connection broke: giving back again could double it
      ctx.log.warn({ err: error, reservation }, 'a release failed with its connection and may have been applied; the rest stays held');
    }
  }
}

/** What a route bills for an answered request: the ledger settles it (quota.ts) and the consume log tells it. */
export interface Bill {
  channelId: number;
  charge: number;
  promptTokens: number;
  completionTokens: number;
  isStream: boolean;
  estimated: boolean;
  /** Appended to the log's "model ratio, group ratio" line, e.g. the image size. */
  detail?: string;
  /** What computeQuota was given for `charge`, when it made it: the log spells the formula out from it. */
  pricing?: ChargeInput;
  /** The formula of a charge computeQuota did not make (images). */
  formula?: string;
  /** An answer from the response cache: what the full charge would have been beyond this one. */
  cacheHit?: { saved: number };
}

/** What the pipeline knows of a request that the bill does not: the consume log's details. */
export type CallDetails = Pick<LogDetails, 'protocol' | 'operation' | 'ttftMs' | 'attempts' | 'fallbackModel' | 'traceId'>;

/** The log's "model ratio, group ratio" line, made once per pair of ratios (bounded: ratios come from the options). */
const ratioLines = new Map<number, Map<number, string>>();

function ratioLine(modelRatio: number, groupRatio: number): string {
  let byGroup = ratioLines.get(modelRatio);
  if (!byGroup) {
    if (ratioLines.size >= 1000) ratioLines.clear();
    byGroup = new Map();
    ratioLines.set(modelRatio, byGroup);
  }
  let line = byGroup.get(groupRatio);
  if (line === undefined) {
    line = `model ratio ${modelRatio.toFixed(2)}, group ratio ${groupRatio.toFixed(2)}`;
    if (byGroup.size >= 1000) byGroup.clear();
    byGroup.set(groupRatio, line);
  }
  return line;
}

/** Queued after the answer: the real charge, the counters, the reminder e-mail and the consume log. */
export function settleLater(ctx: MoneyContext, admission: Admission, reservation: Reservation, bill: Bill, call: CallDetails = {}): void {
  const now = Date.now();
  const { options, bookkeeping } = ctx;
  const { caller } = admission;
  const used = bill.charge > 0 || bill.promptTokens + bill.completionTokens > 0;
  // the consume log rides with its settlement: one transaction writes both
  bookkeeping.settle(
    {
      reservation,
      charge: bill.charge,
      channelId: bill.channelId,
      countRequest: used,
      log: options.bool('LogConsumeEnabled') ? consumeLog(admission, reservation, bill, now, call) : undefined,
      budget: ctx.budgets.settle(reservation, bill.charge),
    },
    chargeListener(ctx, Boolean(caller.user.email)),
  );
}

/** Who hears of a batch's charge: the reminder e-mail (users with an address) and the user.balance_low webhook (when one may listen). */
function chargeListener(ctx: MoneyContext, hasEmail: boolean): ChargeListener | undefined {
  const webhook = ctx.balanceLowWanted();
  if (hasEmail && webhook)
    return (userId, charge) => {
      ctx.remind(userId, charge);
      ctx.balanceLow(userId, charge);
    };
  if (hasEmail) return ctx.remind;
  return webhook ? ctx.balanceLow : undefined;
}

/** The consume log's details, from values at hand (no lookup): how the charge was made and what the request went through. */
function consumeDetails(admission: Admission, bill: Bill, call: CallDetails): LogDetails {
  const details: LogDetails = {
    protocol: call.protocol,
    operation: call.operation,
    status: 200,
    modelRatio: admission.modelRatio,
    groupRatio: admission.groupRatio,
  };
  if (call.ttftMs !== undefined) details.ttftMs = call.ttftMs;
  if (call.fallbackModel !== undefined) details.fallbackModel = call.fallbackModel;
  if (call.traceId !== undefined) details.traceId = call.traceId;
  if (bill.cacheHit) details.responseCache = { hit: true, saved: bill.cacheHit.saved };
  if (call.attempts) {
    details.attempts = call.attempts;
    details.retries = call.attempts.length - 1;
  }
  const { pricing } = bill;
  if (pricing) {
    details.completionRatio = pricing.completionRatio;
    if (pricing.cachedPromptTokens) {
      details.cachedTokens = pricing.cachedPromptTokens;
      details.cacheRatio = pricing.cachedPromptRatio;
    }
    if (pricing.cacheCreationTokens) details.cacheWriteTokens = pricing.cacheCreationTokens;
    details.formula = quotaFormula(pricing, admission.modelRatio, admission.groupRatio, bill.charge);
  } else if (bill.formula) {
    details.formula = bill.formula;
  }
  return details;
}

function consumeLog(admission: Admission, reservation: Reservation, bill: Bill, now: number, call: CallDetails): NewLog {
  const { caller } = admission;
  const elapsedMs = now - admission.startedAt;
  return {
    userId: reservation.userId,
    username: caller.user.username,
    type: LogType.consume,
    content: bill.detail
      ? `${ratioLine(admission.modelRatio, admission.groupRatio)}, ${bill.detail}`
      : ratioLine(admission.modelRatio, admission.groupRatio),
    quota: bill.charge,
    tokenName: caller.token.name,
    tokenId: reservation.tokenId,
    modelName: admission.model,
    channelId: bill.channelId,
    promptTokens: bill.promptTokens,
    completionTokens: bill.completionTokens,
    elapsedMs,
    isStream: bill.isStream,
    estimated: bill.estimated,
    createdAt: Math.floor(now / 1000),
    requestId: admission.requestId,
    details: consumeDetails(admission, bill, call),
  };
}

/**
 * What token usage costs at an admission's price: computeQuota's charge, with
 * its inputs kept for the consume log's formula. Cache reads are billed at the
 * model's cached-prompt ratio, cache writes (Anthropic's) at its own.
 */
export function tokenCharge(
  admission: Pick<Admission, 'model' | 'ratio' | 'cachedPromptRatio' | 'cacheCreationRatio'>,
  usage: Usage,
  completionRatio: number,
): Pick<Bill, 'charge' | 'pricing'> {
  // the operator's entries (checked by cachedPromptRatioFor like the catalog's) come first
  const readOverride = admission.cachedPromptRatio === undefined ? undefined : { [admission.model]: admission.cachedPromptRatio };
  const writeOverride = admission.cacheCreationRatio === undefined ? undefined : { [admission.model]: admission.cacheCreationRatio };
  const pricing: ChargeInput = {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    cachedPromptRatio: cachedPromptRatioFor(admission.model, readOverride),
    cacheCreationTokens: usage.cacheCreationTokens,
    cacheCreationRatio: usage.cacheCreationTokens ? cacheCreationRatioFor(admission.model, writeOverride) : 1,
    ratio: admission.ratio,
    completionRatio,
  };
  return { charge: computeQuota(pricing), pricing };
}

/** What generated images cost: a price per image by size, for the images delivered. */
export function imageCharge(
  admission: Pick<Admission, 'ratio' | 'modelRatio' | 'groupRatio'>,
  size: string | undefined,
  delivered: number,
): Pick<Bill, 'charge' | 'formula' | 'detail'> {
  const charge = imageQuota(admission.ratio, size, delivered);
  return {
    charge,
    formula: imageQuotaFormula(admission.modelRatio, admission.groupRatio, size, delivered, charge),
    detail: `size ${size ?? 'default'} (ratio ${IMAGE_SIZE_RATIO[size ?? '256x256'] ?? 1}), ${delivered} image${delivered === 1 ? '' : 's'}`,
  };
}

/** What a rerank billed per search unit costs (Cohere): floor(ratio x 1000) per unit the vendor billed. */
export function searchUnitCharge(
  admission: Pick<Admission, 'ratio' | 'modelRatio' | 'groupRatio'>,
  units: number,
): Pick<Bill, 'charge' | 'formula' | 'detail'> {
  const charge = searchUnitQuota(admission.ratio, units);
  return {
    charge,
    formula: searchUnitQuotaFormula(admission.modelRatio, admission.groupRatio, units, charge),
    detail: `${units} search unit${units === 1 ? '' : 's'}`,
  };
}
