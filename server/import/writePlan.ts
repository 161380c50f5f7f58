// Writing the plan: users, tokens, channels (with their abilities and
// multi-key keys), redemption codes and options in ONE transaction, which
// also checks that the quota totals moved by exactly what was carried and
// rolls everything back if not. A database error is passed on without the
// values its driver quotes (a key in a duplicate-entry message, say).
import type { Kysely, Transaction } from 'kysely';
import type { ImportProgress } from '../../common/importJob';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { writeAbilities } from '../repositories/channels';
import { deleteUserWithSessions, insertImportedRows, replaceOption, resetSequences, ROWS_PER_INSERT } from '../repositories/importRows';
import type { Plan } from './plan';
import { quotaTotals, sameTotals, type QuotaTotals } from './quotaTotals';

async function insertChunked(
  transaction: Transaction<Database>,
  table: 'users' | 'tokens' | 'channels' | 'channel_keys' | 'redemptions',
  rows: Array<Record<string, unknown>>,
  onChunk: (done: number) => void,
) {
  for (let index = 0; index < rows.length; index += ROWS_PER_INSERT) {
    const chunk = rows.slice(index, index + ROWS_PER_INSERT);
    try {
      await insertImportedRows(transaction, table, chunk);
    } catch (error) {
      throw keyless(table, error);
    }
    onChunk(Math.min(rows.length, index + ROWS_PER_INSERT));
  }
}

/** A database error without the values the driver quotes in it (a key in a duplicate-entry message, say). */
function keyless(table: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`writing ${table} failed: ${message.replace(/'[^']*'/g, "'…'").replace(/\([^)]*\)=\([^)]*\)/g, '(…)')}`);
}

/** Writes the plan in one transaction, the fresh root it replaces gone; throws (writing nothing) unless the totals come out as expected. */
export async function writePlan(
  target: { db: Kysely<Database>; dialect: DatabaseConfig['dialect'] },
  plan: Plan,
  replaceRoot: { id: number } | undefined,
  expected: QuotaTotals,
  progress: (progress: ImportProgress) => void,
): Promise<void> {
  await target.db.transaction().execute(async (transaction) => {
    if (replaceRoot) await deleteUserWithSessions(transaction, replaceRoot.id);
    await insertChunked(transaction, 'users', plan.users, (done) => progress({ step: 'users', done, total: plan.users.length }));
    await insertChunked(transaction, 'tokens', plan.tokens, (done) => progress({ step: 'tokens', done, total: plan.tokens.length }));
    await insertChunked(transaction, 'channels', plan.channels, (done) =>
      progress({ step: 'channels', done, total: plan.channels.length }),
    );
    for (const channel of plan.channels) await writeAbilities(transaction, channel.id, channel);
    await insertChunked(transaction, 'channel_keys', plan.channelKeys, () => undefined);
    await insertChunked(transaction, 'redemptions', plan.redemptions, (done) =>
      progress({ step: 'redemptions', done, total: plan.redemptions.length }),
    );
    for (const option of plan.options) await replaceOption(transaction, option);
    progress({ step: 'options', done: plan.options.length, total: plan.options.length });
    const after = await quotaTotals(transaction);
    if (!sameTotals(after, expected)) {
      throw new Error(
        `the quota totals after the import (${JSON.stringify(after)}) differ from the expected ${JSON.stringify(expected)}: nothing was written`,
      );
    }
    if (target.dialect === 'postgres') await resetSequences(transaction, ['users', 'tokens', 'channels', 'redemptions']);
  });
}
