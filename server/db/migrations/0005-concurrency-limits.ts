// Frozen: how many relayed requests a token or a user may have in flight at
// once on one node. 0 follows the TokenConcurrencyLimit / UserConcurrencyLimit
// option, -1 means no limit, any other value is the limit itself.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    await db.schema
      .alterTable(table)
      .addColumn('concurrency_limit', 'integer', (column) => column.notNull().defaultTo(0))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) await db.schema.alterTable(table).dropColumn('concurrency_limit').execute();
}
