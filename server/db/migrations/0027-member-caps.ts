// Frozen: per-member spending caps in organisations. A member's calls through
// the organisation's keys (tokens.member_user_id) count against a lifetime cap
// (cap_quota, 0 = none; spent_quota is everything they charged through the
// organisation) and a cap per period (cap_period '', 'day', 'week' or 'month';
// cap_period_quota), whose spend is stored as users' and tokens' budgets store
// theirs: period_spent charged in the period that began at period_start.
import type { Kysely } from 'kysely';

const AMOUNTS = ['cap_quota', 'spent_quota', 'cap_period_quota', 'period_spent', 'period_start'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organization_members')
    .addColumn('cap_period', 'varchar(8)', (column) => column.notNull().defaultTo(''))
    .execute();
  for (const column of AMOUNTS) {
    await db.schema
      .alterTable('organization_members')
      .addColumn(column, 'bigint', (definition) => definition.notNull().defaultTo(0))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['cap_period', ...AMOUNTS]) await db.schema.alterTable('organization_members').dropColumn(column).execute();
}
