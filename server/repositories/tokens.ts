// Queries on relay tokens; every read and write is scoped to the owner.
import type { Kysely, Selectable } from 'kysely';
import type { TokenRecord } from '../../common/records';
import { effectiveTokenRateLimits, type RateLimitPair } from '../../common/rateLimits';
import { budgetOf } from './budgets';
import type { BudgetPeriod } from '../../common/budgets';
import { insertReturningId, type Database } from '../db/database';
import type { DatabaseConfig } from '../config';
import type { TokensTable } from '../db/schema/tokens';
import { maskSecret } from '../secrets';
import { orderedBy, SEARCH_LIMIT, startsWith, wholeKeyOf, type ListSort, type PageWindow } from './pagination';

export type TokenRow = Selectable<TokensTable>;
type Executor = Kysely<Database>;

/** The names of these tokens, by id, whoever owns them (a deleted token is missing). */
export async function tokenNames(db: Executor, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('tokens').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [Number(row.id), String(row.name)]));
}

/** The token list's facet: the stored status. */
export interface TokenFilter {
  status?: number;
}

const ownTokens = (db: Executor, userId: number, filter: TokenFilter) => {
  const query = db.selectFrom('tokens').selectAll().where('user_id', '=', userId);
  return filter.status === undefined ? query : query.where('status', '=', filter.status);
};

export function listTokens(
  db: Executor,
  userId: number,
  window: PageWindow,
  sort: ListSort,
  filter: TokenFilter = {},
): Promise<TokenRow[]> {
  return orderedBy(ownTokens(db, userId, filter), sort)
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

export function searchTokens(db: Executor, userId: number, keyword: string, sort: ListSort, filter: TokenFilter = {}): Promise<TokenRow[]> {
  const key = wholeKeyOf(keyword);
  const matching = ownTokens(db, userId, filter).where((eb) =>
    key === undefined ? startsWith('name', keyword) : eb.or([eb('key', '=', key), startsWith('name', keyword)]),
  );
  return orderedBy(matching, sort).limit(SEARCH_LIMIT).execute();
}

export function findOwnToken(db: Executor, userId: number, id: number): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export interface TokenFields {
  name: string;
  remain_quota: number;
  unlimited_quota: number;
  expired_time: number;
  models: string | null;
  allowed_ips: string | null;
  concurrency_limit: number;
  rpm_limit: number | null;
  tpm_limit: number | null;
  budget_period: BudgetPeriod;
  budget_quota: number;
}

export function createToken(
  db: Executor,
  dialect: DatabaseConfig['dialect'],
  userId: number,
  key: string,
  fields: TokenFields,
): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  return insertReturningId(
    dialect,
    db.insertInto('tokens').values({ ...fields, user_id: userId, key, status: 1, created_time: now, accessed_time: now, used_quota: 0 }),
  );
}

export async function updateOwnToken(
  db: Executor,
  userId: number,
  id: number,
  patch: Partial<TokenFields & { status: number; period_spent: number; period_start: number }>,
): Promise<void> {
  await db.updateTable('tokens').set(patch).where('id', '=', id).where('user_id', '=', userId).execute();
}

export async function deleteOwnToken(db: Executor, userId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const limitOf = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/**
 * The token as lists show it: the key masked (the full key has its own endpoint); with its user's limits, what limits
 * it in effect; with the operator's time zone, the spend of its budget this period.
 */
export function toTokenRecord(
  row: TokenRow,
  revealKey = false,
  userLimits?: RateLimitPair,
  budgetZone?: string,
): TokenRecord & { models: string; allowed_ips: string } {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    name: row.name,
    key: revealKey ? row.key : maskSecret(row.key),
    status: Number(row.status),
    used_quota: Number(row.used_quota),
    remain_quota: Number(row.remain_quota),
    unlimited_quota: Number(row.unlimited_quota) === 1,
    created_time: Number(row.created_time),
    accessed_time: Number(row.accessed_time),
    expired_time: Number(row.expired_time),
    models: row.models ?? '',
    allowed_ips: row.allowed_ips ?? '',
    concurrency_limit: Number(row.concurrency_limit ?? 0),
    rpm_limit: limitOf(row.rpm_limit),
    tpm_limit: limitOf(row.tpm_limit),
    ...(userLimits
      ? { rate_limits: effectiveTokenRateLimits({ rpm_limit: limitOf(row.rpm_limit), tpm_limit: limitOf(row.tpm_limit) }, userLimits) }
      : {}),
    ...budgetOf(row, budgetZone),
  };
}
