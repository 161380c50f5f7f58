// Queries on the options table (runtime settings, stored as strings).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export async function loadOptionRows(db: Kysely<Database>): Promise<Array<{ key: string; value: string }>> {
  return db.selectFrom('options').select(['key', 'value']).execute();
}

/** Insert-or-update that works on every dialect, including two nodes racing on a first write. */
export async function saveOption(db: Kysely<Database>, key: string, value: string): Promise<void> {
  const updated = await db.updateTable('options').set({ value }).where('key', '=', key).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  try {
    await db.insertInto('options').values({ key, value }).execute();
  } catch (error) {
    const retried = await db.updateTable('options').set({ value }).where('key', '=', key).executeTakeFirst();
    if (Number(retried.numUpdatedRows) === 0) throw error;
  }
}
