// Frozen: usernames, e-mail addresses, external ids, keys and code hashes
// compare byte for byte on MySQL/MariaDB too. Their default collations
// (utf8mb4_general_ci and kin) ignore case and trailing spaces, so `ROOT`
// signed in as `root` and a key differing only in case was accepted.
// SQLite and PostgreSQL already compare exactly: nothing to do there.
// A MODIFY restates the whole column (type, null, default); its indexes stay.
import { MysqlAdapter, sql, type Kysely } from 'kysely';

const EXACT = 'character set utf8mb4 collate utf8mb4_bin';

/** Each table's identity columns with their definitions from 0001/0002, collation aside. */
const COLUMNS: Record<string, Array<[column: string, definition: string]>> = {
  users: [
    ['username', 'varchar(64) not null'],
    ['email', "varchar(128) not null default ''"],
    ['github_id', "varchar(64) not null default ''"],
    ['wechat_id', "varchar(64) not null default ''"],
    ['access_token_hash', 'varchar(64) null'],
    ['aff_code', 'varchar(32) null'],
  ],
  tokens: [['key', 'varchar(64) not null']],
  redemptions: [['key', 'varchar(64) not null']],
  verification_codes: [
    ['target', 'varchar(128) not null'],
    ['code_hash', 'varchar(64) not null'],
  ],
};

async function modifyAll(db: Kysely<any>, collation: string): Promise<void> {
  if (!(db.getExecutor().adapter instanceof MysqlAdapter)) return;
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const changes = columns.map(([column, definition]) => {
      const [type, ...rest] = definition.split(' ');
      return `modify \`${column}\` ${type}${collation ? ` ${collation}` : ''} ${rest.join(' ')}`;
    });
    await sql.raw(`alter table \`${table}\` ${changes.join(', ')}`).execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await modifyAll(db, EXACT);
}

export async function down(db: Kysely<any>): Promise<void> {
  // back to the table's default collation
  await modifyAll(db, '');
}
