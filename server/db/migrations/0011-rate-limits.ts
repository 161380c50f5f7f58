// Frozen: per-minute relay limits of a user or a token, requests (rpm_limit)
// and tokens (tpm_limit). NULL inherits (a user: the GroupRateLimits option;
// a token: its user's), 0 is unlimited, any other value is the limit itself.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    for (const column of ['rpm_limit', 'tpm_limit']) {
      await db.schema.alterTable(table).addColumn(column, 'bigint').execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'tokens']) {
    for (const column of ['rpm_limit', 'tpm_limit']) await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
