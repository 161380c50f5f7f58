// The exact response cache's rows (migration 0032), the store used when no
// Redis is configured (server/relay/responseCacheStore.ts). A row past its
// expiry is a miss; expired rows and, over the total cap, the oldest rows are
// removed as a new one is stored.
import type { Kysely } from 'kysely';
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
