// A charge of tokens said in dollars, line by line, for the log drawer's "How
// was this computed?": "1,200 input tokens × $2.50 / 1M = $0.0030", one line
// per kind of token, then the total charged. A token's price is its quota
// (model ratio × group ratio, times the completion or cache ratio) over
// quota_per_unit, per million tokens. Only a charge of tokens whose row kept
// every ratio it used is itemised: an image, a search unit, a realtime
// response, a charge with cache writes (whose ratio the row does not keep) is
// explained by its quota formula alone (behind the ratios' toggle).
import type { RaRecord } from 'react-admin';
import type { ClientStatus } from '../../../common/options';
import type { LogDetails } from '../../../common/records';
import { formatQuota, quotaUnit } from '../../quota';

export type CostKind = 'input' | 'cached' | 'cache_write' | 'output';

/** One line: so many tokens of a kind, at a price (quota per token), cost so much quota. */
export interface CostLine {
  kind: CostKind;
  tokens: number;
  /** Quota per token. */
  perToken: number;
  /** tokens × perToken (not rounded: computeQuota rounds the total only). */
  quota: number;
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const whole = (value: unknown) => (isNumber(value) && value > 0 ? Math.floor(value) : 0);

/** The ratio the row kept for a kind of token it has, else undefined (it cannot be itemised). */
function ratioFor(tokens: number, ratio: unknown, absent = 1): number | undefined {
  if (tokens === 0) return absent;
  return isNumber(ratio) ? ratio : undefined;
}

/**
 * The lines of a token charge (computeQuota's terms, server/billing/prices.ts),
 * or undefined when the row is not one or lacks a ratio it used.
 */
export function costLines(record: RaRecord, details: LogDetails): CostLine[] | undefined {
  const { modelRatio, groupRatio, completionRatio } = details;
  if (!isNumber(modelRatio) || !isNumber(groupRatio) || !isNumber(completionRatio)) return undefined;
  const prompt = whole(record.prompt_tokens);
  const completion = whole(record.completion_tokens);
  const cached = Math.min(whole(details.cachedTokens), prompt);
  const written = Math.min(whole(details.cacheWriteTokens), prompt - cached);
  const cacheRatio = ratioFor(cached, details.cacheRatio);
  // the write's own ratio is not kept on the row: a charge with cache writes is left to its formula
  if (cacheRatio === undefined || written > 0) return undefined;
  const price = modelRatio * groupRatio;
  const lines: Array<Omit<CostLine, 'quota'>> = [
    { kind: 'input', tokens: prompt - cached, perToken: price },
    { kind: 'cached', tokens: cached, perToken: price * cacheRatio },
    { kind: 'output', tokens: completion, perToken: price * completionRatio },
  ];
  return lines.filter((line) => line.tokens > 0).map((line) => ({ ...line, quota: line.tokens * line.perToken }));
}

/** A price per million tokens in dollars: at least 2 decimals, at most 6 ($2.50, $0.075, $3.125). */
export function pricePerMillion(perToken: number, perUnit: number): string {
  const dollars = Number(((perToken * 1_000_000) / perUnit).toFixed(6));
  const [, decimals = ''] = String(dollars).split('.');
  return `$${dollars.toFixed(Math.max(2, decimals.length))}`;
}

/**
 * An amount of the explanation in dollars with two significant digits below a
 * dollar, so its lines and its total read alike ($0.0030, $0.00050, $0.050),
 * 2 decimals from a dollar up.
 */
export function costAmount(quota: number, status: Pick<ClientStatus, 'display_in_currency' | 'quota_per_unit'> | null): string {
  const dollars = Math.abs(quota / quotaUnit(status).perUnit);
  if (dollars === 0 || dollars >= 1) return formatQuota(quota, status);
  return formatQuota(quota, status, Math.min(10, Math.max(2, Math.ceil(-Math.log10(dollars)) + 1)));
}
