// First start: create the root account. Its password is INITIAL_ROOT_PASSWORD
// or a strong random one shown once in the log; never a fixed default.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Role } from '../common/roles';
import type { Config } from './config';
import type { Database } from './db/database';
import { lockFirstMigration } from './repositories/migrationLock';
import { countUsers, createUser } from './repositories/users';
import { hashPassword } from './passwords';

export const ROOT_INITIAL_QUOTA = 100_000_000;

export interface BootstrapResult {
  created: boolean;
  /** Present only when the password was generated here. */
  generatedPassword?: string;
}

export async function ensureRootUser(db: Kysely<Database>, config: Config): Promise<BootstrapResult> {
  if ((await countUsers(db)) > 0) return { created: false };
  const generated = config.initialRootPassword ? undefined : randomBytes(15).toString('base64url');
  const password = config.initialRootPassword ?? generated!;
  const passwordHash = await hashPassword(password, config.passwordHashCost);
  const dialect = config.database.dialect;
  try {
    const created = await db.transaction().execute(async (transaction) => {
      // Several workers or nodes starting on one empty PostgreSQL or MySQL database all get here: one at a time
      // (a lock on a row every migrated database has), so the first inserts root and takes the users table's first
      // id, and the others find it. Without the lock, an insert that lost the race could still take id 1 from the
      // sequence first and leave root at 2.
      if (dialect !== 'sqlite') await lockFirstMigration(transaction);
      if ((await countUsers(transaction)) > 0) return false;
      await createUser(transaction, dialect, {
        username: 'root',
        passwordHash,
        displayName: 'Root User',
        role: Role.root,
        quota: ROOT_INITIAL_QUOTA,
      });
      return true;
    });
    if (!created) return { created: false };
  } catch (error) {
    // another node sharing the database created root first
    if ((await countUsers(db)) > 0) return { created: false };
    throw error;
  }
  return { created: true, generatedPassword: generated };
}

export function rootPasswordBanner(password: string): string {
  const lines = [
    'Initial root account created.',
    `  username: root, password: ${password}`,
    'Sign in and change this password under Setting. It is not shown again.',
  ];
  const width = Math.max(...lines.map((line) => line.length)) + 4;
  const border = '*'.repeat(width);
  return ['', border, ...lines.map((line) => `* ${line.padEnd(width - 4)} *`), border, ''].join('\n');
}
