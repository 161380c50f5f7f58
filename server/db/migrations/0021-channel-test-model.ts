// Frozen: the model a channel's test asks for when none is named ('' = the
// channel's first model), under the name later one-api versions give it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('channels')
    .addColumn('test_model', 'varchar(255)', (column) => column.notNull().defaultTo(''))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').dropColumn('test_model').execute();
}
