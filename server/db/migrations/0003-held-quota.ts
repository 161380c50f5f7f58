// Frozen: what requests in flight hold of each user's and each limited
// token's quota. A reservation adds to it and its settlement or release takes
// it off again, in the same UPDATE as the balance, so whatever is left when a
// process dies belongs to requests that will never settle (billing/quota.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    await db.schema
      .alterTable(table)
      .addColumn('held_quota', 'bigint', (column) => column.notNull().defaultTo(0))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) await db.schema.alterTable(table).dropColumn('held_quota').execute();
}
