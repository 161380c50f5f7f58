// The money the import checks: what users hold, what they used, and what
// their tokens may still spend, summed over a database, and the arithmetic
// on those sums (the target after = before + carried - a replaced root).
import type { Database } from '../db/database';
import type { Kysely } from 'kysely';
import { quotaSums } from '../repositories/importRows';
import { num } from './sourceValues';

/** The money: what users hold, what they used, and what their tokens may still spend. */
export interface QuotaTotals {
  userQuota: number;
  userUsedQuota: number;
  tokenRemainQuota: number;
}

export const ZERO: QuotaTotals = { userQuota: 0, userUsedQuota: 0, tokenRemainQuota: 0 };

/** left + sign × right, field by field. */
export const addTotals = (left: QuotaTotals, right: QuotaTotals, sign = 1): QuotaTotals => ({
  userQuota: left.userQuota + sign * right.userQuota,
  userUsedQuota: left.userUsedQuota + sign * right.userUsedQuota,
  tokenRemainQuota: left.tokenRemainQuota + sign * right.tokenRemainQuota,
});

/** Whether two totals are equal in every field. */
export const sameTotals = (left: QuotaTotals, right: QuotaTotals) =>
  left.userQuota === right.userQuota && left.userUsedQuota === right.userUsedQuota && left.tokenRemainQuota === right.tokenRemainQuota;

/** A database's quota totals (the target's, before and after the import). */
export async function quotaTotals(db: Kysely<Database>): Promise<QuotaTotals> {
  const sums = await quotaSums(db);
  return { userQuota: num(sums.quota), userUsedQuota: num(sums.used), tokenRemainQuota: num(sums.remain) };
}
