// Frozen: the message of a channel's last failed test ('' after a pass or
// before any test), so the channel list can say why instead of "Untested".
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('channels')
    .addColumn('test_error', 'varchar(1024)', (column) => column.notNull().defaultTo(''))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').dropColumn('test_error').execute();
}
