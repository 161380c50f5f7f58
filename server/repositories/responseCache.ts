// The exact response cache's rows (migration 0032), the store used when no
// Redis is configured (server/relay/responseCacheStore.ts). A row past its
// expiry is a miss; expired rows and, over the total cap, the oldest rows are
// removed as a new one is stored. The dashboard's count of hits and what
// they saved reads the hits' consume logs (cacheHitTotals).
import { MysqlAdapter, PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import { LogType } from '../../common/roles';
import type { Database } from '../db/database';

type Db = Kysely<Database>;

/** The stored entry of a key, unless it has expired. */
export async function cachedEntry(db: Db, key: string, now: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('response_cache')
    .select('entry')
    .where('cache_key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.entry;
}

/** Stores (or replaces) an entry, then trims: expired rows go, and the oldest until the rest fits in `maxTotal` bytes. */
export async function storeEntry(
  db: Db,
  row: { key: string; entry: string; size: number; createdAt: number; expiresAt: number },
  maxTotal: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('response_cache').where('cache_key', '=', row.key).execute();
    await trx
      .insertInto('response_cache')
      .values({ cache_key: row.key, entry: row.entry, size: row.size, created_at: row.createdAt, expires_at: row.expiresAt })
      .execute();
  });
  await db.deleteFrom('response_cache').where('expires_at', '<=', row.createdAt).execute();
  const rows = await db.selectFrom('response_cache').select(['cache_key', 'size']).orderBy('created_at', 'desc').execute();
  let total = 0;
  const evicted: string[] = [];
  for (const { cache_key, size } of rows) {
    total += Number(size);
    if (total > maxTotal) evicted.push(cache_key);
  }
  if (evicted.length > 0) await db.deleteFrom('response_cache').where('cache_key', 'in', evicted).execute();
}

/** Every row (the tests and the bench clear the cache between runs). */
export async function clearEntries(db: Db): Promise<void> {
  await db.deleteFrom('response_cache').execute();
}

/** What the cache's hits came to: how many, what they were charged and what they saved (raw quota). */
export interface CacheHitTotals {
  hits: number;
  quota: number;
  saved: number;
}

/** Where a hit's consume log keeps what it saved (its details, `other`), as each dialect reads JSON. */
function savedOf(db: Db): RawBuilder<number> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return sql<number>`cast(cast(other as json) -> 'responseCache' ->> 'saved' as bigint)`;
  if (adapter instanceof MysqlAdapter) return sql<number>`cast(json_extract(other, '$.responseCache.saved') as signed)`;
  return sql<number>`json_extract(other, '$.responseCache.saved')`;
}

/**
 * The hits of a range (created_at from `from`, before `to`), narrowed like the
 * dashboard's figures. Read from the consume logs, the only place a hit's
 * saving is kept: a hit's log has channel 0 and `responseCache` in its details,
 * so only the hits' rows are summed (the created_at index bounds the read).
 */
export async function cacheHitTotals(
  db: Db,
  scope: { userId?: number; tokenId?: number; model?: string; channelId?: number },
  from: number,
  to: number,
): Promise<CacheHitTotals> {
  if (scope.channelId !== undefined && scope.channelId !== 0) return { hits: 0, quota: 0, saved: 0 };
  let query = db
    .selectFrom('logs')
    .where('type', '=', LogType.consume)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('channel_id', '=', 0)
    .where('other', 'like', '%"responseCache":{"hit":true%');
  if (scope.userId !== undefined) query = query.where('user_id', '=', scope.userId);
  if (scope.tokenId !== undefined) query = query.where('token_id', '=', scope.tokenId);
  if (scope.model !== undefined) query = query.where('model_name', '=', scope.model);
  const row = await query
    .select((eb) => [
      eb.fn.countAll<number>().as('hits'),
      eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('quota'),
      eb.fn.coalesce(eb.fn.sum<number>(savedOf(db)), eb.lit(0)).as('saved'),
    ])
    .executeTakeFirst();
  return { hits: Number(row?.hits ?? 0), quota: Number(row?.quota ?? 0), saved: Number(row?.saved ?? 0) };
}
