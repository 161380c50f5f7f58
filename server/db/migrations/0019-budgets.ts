// Frozen: budgets that reset (common/budgets.ts). A user or a token may have a
// cap per period (budget_period '', 'day', 'week' or 'month'; budget_quota in
// quota units) beside its lifetime quota. period_spent is what was charged in
// the period that began at period_start (Unix seconds); a spend whose start is
// not the current period's counts as nothing.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    await db.schema
      .alterTable(table)
      .addColumn('budget_period', 'varchar(8)', (column) => column.notNull().defaultTo(''))
      .execute();
    for (const column of ['budget_quota', 'period_spent', 'period_start']) {
      await db.schema
        .alterTable(table)
        .addColumn(column, 'bigint', (definition) => definition.notNull().defaultTo(0))
        .execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    for (const column of ['budget_period', 'budget_quota', 'period_spent', 'period_start'])
      await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
