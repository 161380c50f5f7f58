// The queries of the one-api / new-api import (server/import/): reading the
// source (a database of the other product's schema, every row untyped),
// sizing up the target, and writing the carried rows. The source is only ever
// read. Values come back as the drivers return them (a count or a sum may be
// a string or a bigint): the importer reads them with its own lenient number
// and text readers. Keys are carried but never logged or quoted from here.
import type { Insertable, Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/database';
import type { LogsTable } from '../db/schema/logs';
import type { NewLog } from './logs';
import { rollupsOf, upsertRollups } from './usageRollups';

type Executor = Kysely<Database>;
/** The source database as server/import/source.ts opens it: its tables are known only at run time. */
type SourceDb = Kysely<Record<string, Record<string, unknown>>>;
type SourceRow = Record<string, unknown>;

/** Rows per INSERT: well under every dialect's bound-parameter limit. */
export const ROWS_PER_INSERT = 400;

/** Every row of a source table, by id. */
export async function sourceTableRows(source: SourceDb, table: string): Promise<SourceRow[]> {
  return await source.selectFrom(table).selectAll().orderBy('id').execute();
}

/** The source's options table (keyed by `key`, no id). */
export async function sourceOptionRows(source: SourceDb): Promise<SourceRow[]> {
  return await source.selectFrom('options').selectAll().execute();
}

/** How many logs the source holds, as its driver counts them. */
export async function sourceLogCount(source: SourceDb): Promise<unknown> {
  return (
    await source
      .selectFrom('logs')
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirst()
  )?.count;
}

/** The source's next batch of logs: those after `afterId`, by id. */
export async function sourceLogBatch(source: SourceDb, afterId: number, batchSize: number): Promise<SourceRow[]> {
  return await source.selectFrom('logs').selectAll().where('id', '>', afterId).orderBy('id').limit(batchSize).execute();
}

/** The target's quota sums (users' balances and use, tokens' remaining), as the driver returns them. */
export async function quotaSums(db: Executor): Promise<{ quota: unknown; used: unknown; remain: unknown }> {
  const users = await db
    .selectFrom('users')
    .select((eb) => [eb.fn.sum<number>('quota').as('quota'), eb.fn.sum<number>('used_quota').as('used')])
    .executeTakeFirst();
  const tokens = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.sum<number>('remain_quota').as('remain'))
    .executeTakeFirst();
  return { quota: users?.quota, used: users?.used, remain: tokens?.remain };
}

/** A target table's highest id (undefined or null when it is empty). */
export async function highestId(db: Executor, table: 'users' | 'tokens' | 'channels' | 'redemptions' | 'logs'): Promise<unknown> {
  return (
    await db
      .selectFrom(table)
      .select((eb) => eb.fn.max<number>('id').as('id'))
      .executeTakeFirst()
  )?.id;
}

/** How many rows a target table holds. */
export async function rowCount(db: Executor, table: 'users' | 'tokens' | 'channels' | 'redemptions'): Promise<unknown> {
  return (
    await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirst()
  )?.count;
}

/** Every target user's id and username. */
export function userIdsAndNames(db: Executor) {
  return db.selectFrom('users').select(['id', 'username']).execute();
}

/** The target's one user (called when it holds exactly one): what tells a fresh install's untouched root. */
export function onlyUser(db: Executor) {
  return db.selectFrom('users').select(['id', 'username', 'role', 'quota', 'used_quota', 'request_count']).executeTakeFirstOrThrow();
}

/** The target's usernames. */
export async function takenUsernames(db: Executor): Promise<string[]> {
  return (await db.selectFrom('users').select('username').execute()).map((row) => row.username);
}

/** The target's access token hashes. */
export async function takenAccessTokenHashes(db: Executor): Promise<Array<string | null>> {
  return (await db.selectFrom('users').select('access_token_hash').execute()).map((row) => row.access_token_hash);
}

/** The target's invite codes. */
export async function takenAffCodes(db: Executor): Promise<Array<string | null>> {
  return (await db.selectFrom('users').select('aff_code').execute()).map((row) => row.aff_code);
}

/** The target's token keys. */
export async function takenTokenKeys(db: Executor): Promise<string[]> {
  return (await db.selectFrom('tokens').select('key').execute()).map((row) => row.key);
}

/** The target's redemption codes. */
export async function takenRedemptionCodes(db: Executor): Promise<string[]> {
  return (await db.selectFrom('redemptions').select('key').execute()).map((row) => row.key);
}

/** The target's options, key to value. */
export async function targetOptionValues(db: Executor): Promise<Map<string, string>> {
  return new Map((await db.selectFrom('options').select(['key', 'value']).execute()).map((row) => [row.key, row.value]));
}

/** Removes a user and its sessions (the fresh install's root the import replaces). */
export async function deleteUserWithSessions(transaction: Transaction<Database>, userId: number): Promise<void> {
  await transaction.deleteFrom('sessions').where('user_id', '=', userId).execute();
  await transaction.deleteFrom('users').where('id', '=', userId).execute();
}

/** One INSERT of mapped rows (at most ROWS_PER_INSERT of them). */
export async function insertImportedRows(
  transaction: Transaction<Database>,
  table: 'users' | 'tokens' | 'channels' | 'channel_keys' | 'redemptions',
  rows: Array<Record<string, unknown>>,
): Promise<void> {
  await transaction
    .insertInto(table)
    .values(rows as never)
    .execute();
}

/** Sets an option, whatever it held before. */
export async function replaceOption(transaction: Transaction<Database>, option: { key: string; value: string }): Promise<void> {
  await transaction.deleteFrom('options').where('key', '=', option.key).execute();
  await transaction.insertInto('options').values(option).execute();
}

/** PostgreSQL's bigserial sequences do not move when ids are given: start them after the highest. */
export async function resetSequences(db: Kysely<Database>, tables: string[]) {
  for (const table of tables) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(
      db,
    );
  }
}

/** Whether the target holds any log with an id from `firstId` to `lastId` (a batch an earlier run wrote). */
export function anyLogBetween(db: Executor, firstId: number, lastId: number) {
  return db.selectFrom('logs').select('id').where('id', '>=', firstId).where('id', '<=', lastId).limit(1).executeTakeFirst();
}

/** A batch of logs, under the ids given, and their rollups, in one transaction. */
export async function insertImportedLogs(db: Executor, values: Array<Insertable<LogsTable>>, logs: NewLog[]): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    for (let index = 0; index < values.length; index += ROWS_PER_INSERT) {
      await transaction
        .insertInto('logs')
        .values(values.slice(index, index + ROWS_PER_INSERT))
        .execute();
    }
    // consume logs are the rollups' requests, error logs (new-api numbers them 5 too) their errors
    await upsertRollups(transaction, rollupsOf(logs));
  });
}
