// The source schemas the import tests read: one-api v0.5.3, one-api's latest
// release and new-api's latest release, written from their GORM models
// (where each came from: __fixtures__/README.md). A column's type is given the
// way GORM maps the Go field, and becomes each dialect's DDL here, so the
// same schema is built on SQLite (the committed fixture files), MariaDB and
// PostgreSQL (in the tests, with the rows copied from the SQLite file).
import type SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';

/**
 * - id: the auto-increment primary key
 * - int: Go int with `type:int` (32-bit on MySQL); bigint: Go int / int64
 * - text: a plain string; itext: a string GORM indexes or gives a default (varchar(191) on MySQL)
 * - varchar(n), char(n): as declared; bool; float: float64
 */
type ColumnType = 'id' | 'int' | 'bigint' | 'text' | 'itext' | 'bool' | 'float' | `varchar(${number})` | `char(${number})`;
type Column = [name: string, type: ColumnType, options?: { default?: string | number; unique?: boolean; notNull?: boolean }];
export interface TableSpec {
  name: string;
  columns: Column[];
  primaryKey?: string[];
}
export type Product = 'one-api-v0.5.3' | 'one-api-latest' | 'new-api-latest';
export const PRODUCTS: Product[] = ['one-api-v0.5.3', 'one-api-latest', 'new-api-latest'];

const v053: TableSpec[] = [
  {
    name: 'users',
    columns: [
      ['id', 'id'],
      ['username', 'itext', { unique: true }],
      ['password', 'text', { notNull: true }],
      ['display_name', 'itext'],
      ['role', 'int', { default: 1 }],
      ['status', 'int', { default: 1 }],
      ['email', 'itext'],
      ['github_id', 'itext'],
      ['wechat_id', 'itext'],
      ['access_token', 'char(32)', { unique: true }],
      ['quota', 'int', { default: 0 }],
      ['used_quota', 'int', { default: 0 }],
      ['request_count', 'int', { default: 0 }],
      ['group', 'varchar(32)', { default: 'default' }],
      ['aff_code', 'varchar(32)', { unique: true }],
      ['inviter_id', 'int'],
    ],
  },
  {
    name: 'tokens',
    columns: [
      ['id', 'id'],
      ['user_id', 'bigint'],
      ['key', 'char(48)', { unique: true }],
      ['status', 'bigint', { default: 1 }],
      ['name', 'itext'],
      ['created_time', 'bigint'],
      ['accessed_time', 'bigint'],
      ['expired_time', 'bigint', { default: -1 }],
      ['remain_quota', 'bigint', { default: 0 }],
      ['unlimited_quota', 'bool', { default: 0 }],
      ['used_quota', 'bigint', { default: 0 }],
    ],
  },
  {
    name: 'channels',
    columns: [
      ['id', 'id'],
      ['type', 'bigint', { default: 0 }],
      ['key', 'itext', { notNull: true }],
      ['status', 'bigint', { default: 1 }],
      ['name', 'itext'],
      ['weight', 'bigint'],
      ['created_time', 'bigint'],
      ['test_time', 'bigint'],
      ['response_time', 'bigint'],
      ['base_url', 'text'],
      ['other', 'text'],
      ['balance', 'float'],
      ['balance_updated_time', 'bigint'],
      ['models', 'text'],
      ['group', 'varchar(32)', { default: 'default' }],
      ['used_quota', 'bigint', { default: 0 }],
      ['model_mapping', 'varchar(1024)', { default: '' }],
    ],
  },
  {
    name: 'abilities',
    columns: [
      ['group', 'varchar(32)'],
      ['model', 'itext'],
      ['channel_id', 'bigint'],
      ['enabled', 'bool'],
    ],
    primaryKey: ['group', 'model', 'channel_id'],
  },
  {
    name: 'redemptions',
    columns: [
      ['id', 'id'],
      ['user_id', 'bigint'],
      ['key', 'char(32)', { unique: true }],
      ['status', 'bigint', { default: 1 }],
      ['name', 'itext'],
      ['quota', 'bigint', { default: 100 }],
      ['created_time', 'bigint'],
      ['redeemed_time', 'bigint'],
    ],
  },
  {
    name: 'logs',
    columns: [
      ['id', 'id'],
      ['user_id', 'bigint'],
      ['created_at', 'bigint'],
      ['type', 'bigint'],
      ['content', 'text'],
      ['username', 'itext', { default: '' }],
      ['token_name', 'itext', { default: '' }],
      ['model_name', 'itext', { default: '' }],
      ['quota', 'bigint', { default: 0 }],
      ['prompt_tokens', 'bigint', { default: 0 }],
      ['completion_tokens', 'bigint', { default: 0 }],
    ],
  },
  {
    name: 'options',
    columns: [
      ['key', 'itext'],
      ['value', 'text'],
    ],
    primaryKey: ['key'],
  },
];

const tableOf = (tables: TableSpec[], name: string) => tables.find((table) => table.name === name)!;
const replaceColumns = (table: TableSpec, change: (columns: Column[]) => Column[]): TableSpec => ({
  ...table,
  columns: change(table.columns),
});
const withColumns = (tables: TableSpec[], changes: Record<string, (columns: Column[]) => Column[]>) =>
  tables.map((table) => (changes[table.name] ? replaceColumns(table, changes[table.name]) : table));
const retype = (columns: Column[], types: Record<string, Column>) => columns.map((column) => types[column[0]] ?? column);

/** one-api v0.6.x: 64-bit quotas, Lark and OIDC ids, token model and subnet limits, channel priority/config/system prompt, log timing. */
const oneApiLatest: TableSpec[] = withColumns(v053, {
  users: (columns) => [
    ...retype(columns, { quota: ['quota', 'bigint', { default: 0 }], used_quota: ['used_quota', 'bigint', { default: 0 }] }).filter(
      ([name]) => name !== 'inviter_id',
    ),
    ['inviter_id', 'int'],
    ['lark_id', 'itext'],
    ['oidc_id', 'itext'],
  ],
  tokens: (columns) => [...columns, ['models', 'text'], ['subnet', 'itext', { default: '' }]],
  channels: (columns) => [
    ...retype(columns, { other: ['other', 'text'], base_url: ['base_url', 'itext', { default: '' }] }),
    ['priority', 'bigint', { default: 0 }],
    ['config', 'text'],
    ['system_prompt', 'text'],
  ],
  abilities: (columns) => [...columns, ['priority', 'bigint', { default: 0 }]],
  logs: (columns) => [
    ...columns,
    ['channel_id', 'bigint'],
    ['request_id', 'itext', { default: '' }],
    ['elapsed_time', 'bigint', { default: 0 }],
    ['is_stream', 'bool', { default: 0 }],
    ['system_prompt_reset', 'bool', { default: 0 }],
  ],
});

/** new-api: soft deletes, affiliate counters, OAuth ids, token model limits/allowed IPs/group, channel tags and overrides, log token ids and seconds. */
const newApiLatest: TableSpec[] = withColumns(v053, {
  users: (columns) => [
    ...retype(columns, { group: ['group', 'varchar(64)', { default: 'default' }] }),
    ['aff_count', 'int', { default: 0 }],
    ['aff_quota', 'int', { default: 0 }],
    ['aff_history', 'int', { default: 0 }],
    ['deleted_at', 'text'],
    ['linux_do_id', 'itext'],
    ['setting', 'text'],
    ['remark', 'varchar(255)'],
    ['stripe_customer', 'varchar(64)'],
    ['telegram_id', 'itext'],
    ['oidc_id', 'itext'],
    ['discord_id', 'itext'],
  ],
  tokens: (columns) => [
    ...retype(columns, { key: ['key', 'varchar(128)', { unique: true }], remain_quota: ['remain_quota', 'bigint', { default: 0 }] }),
    ['model_limits_enabled', 'bool', { default: 0 }],
    ['model_limits', 'text'],
    ['allow_ips', 'itext', { default: '' }],
    ['group', 'itext', { default: '' }],
    ['cross_group_retry', 'bool', { default: 0 }],
    ['deleted_at', 'text'],
  ],
  channels: (columns) => [
    ...retype(columns, {
      group: ['group', 'varchar(64)', { default: 'default' }],
      model_mapping: ['model_mapping', 'text'],
      base_url: ['base_url', 'itext', { default: '' }],
    }),
    ['openai_organization', 'text'],
    ['test_model', 'text'],
    ['status_code_mapping', 'varchar(1024)', { default: '' }],
    ['priority', 'bigint', { default: 0 }],
    ['auto_ban', 'bigint', { default: 1 }],
    ['other_info', 'text'],
    ['tag', 'itext'],
    ['setting', 'text'],
    ['param_override', 'text'],
    ['header_override', 'text'],
    ['remark', 'varchar(255)'],
    ['channel_info', 'text'],
    ['settings', 'text'],
  ],
  abilities: (columns) => [
    ...retype(columns, { group: ['group', 'varchar(64)'] }),
    ['priority', 'bigint', { default: 0 }],
    ['weight', 'bigint', { default: 0 }],
    ['tag', 'itext'],
  ],
  redemptions: (columns) => [...columns, ['used_user_id', 'bigint'], ['deleted_at', 'text'], ['expired_time', 'bigint']],
  logs: (columns) => [
    ...columns,
    ['use_time', 'bigint', { default: 0 }],
    ['is_stream', 'bool', { default: 0 }],
    ['channel_id', 'bigint'],
    ['token_id', 'bigint', { default: 0 }],
    ['group', 'itext'],
    ['ip', 'itext', { default: '' }],
    ['other', 'text'],
  ],
});

export const SCHEMAS: Record<Product, TableSpec[]> = {
  'one-api-v0.5.3': v053,
  'one-api-latest': oneApiLatest,
  'new-api-latest': newApiLatest,
};

export type Dialect = 'sqlite' | 'mysql' | 'postgres';

function columnType(type: ColumnType, dialect: Dialect): string {
  const byDialect: Record<string, Record<Dialect, string>> = {
    id: { sqlite: 'integer primary key autoincrement', mysql: 'bigint auto_increment primary key', postgres: 'bigserial primary key' },
    int: { sqlite: 'integer', mysql: 'int', postgres: 'integer' },
    bigint: { sqlite: 'integer', mysql: 'bigint', postgres: 'bigint' },
    text: { sqlite: 'text', mysql: 'longtext', postgres: 'text' },
    itext: { sqlite: 'text', mysql: 'varchar(191)', postgres: 'text' },
    bool: { sqlite: 'numeric', mysql: 'boolean', postgres: 'boolean' },
    float: { sqlite: 'real', mysql: 'double', postgres: 'decimal' },
  };
  return byDialect[type]?.[dialect] ?? type;
}

const quote = (name: string, dialect: Dialect) => (dialect === 'mysql' ? `\`${name}\`` : `"${name}"`);

/** The CREATE TABLE statements of one product's schema on one dialect. */
export function createStatements(product: Product, dialect: Dialect): string[] {
  return SCHEMAS[product].map((table) => {
    const columns = table.columns.map(([name, type, options = {}]) => {
      let definition = `${quote(name, dialect)} ${columnType(type, dialect)}`;
      if (options.notNull) definition += ' not null';
      if (options.default !== undefined) {
        const value =
          type === 'bool' && dialect === 'postgres'
            ? String(options.default === 1)
            : typeof options.default === 'number'
              ? String(options.default)
              : `'${options.default}'`;
        definition += ` default ${value}`;
      }
      if (options.unique) definition += ' unique';
      return definition;
    });
    if (table.primaryKey) columns.push(`primary key (${table.primaryKey.map((name) => quote(name, dialect)).join(', ')})`);
    return `create table ${quote(table.name, dialect)} (${columns.join(', ')})`;
  });
}

/**
 * Builds the product's schema in `target` and copies every row of the SQLite
 * fixture into it, so the SQL servers hold exactly the committed rows.
 */
export async function copyFixture(
  product: Product,
  fixture: SQLite.Database,
  target: Kysely<any>,
  dialect: Exclude<Dialect, 'sqlite'>,
): Promise<void> {
  for (const statement of createStatements(product, dialect)) await sql.raw(statement).execute(target);
  for (const table of SCHEMAS[product]) {
    const rows = fixture.prepare(`select * from "${table.name}"`).all() as Array<Record<string, unknown>>;
    const booleans = table.columns.filter(([, type]) => type === 'bool').map(([name]) => name);
    const converted = rows.map((row) => {
      const copy = { ...row };
      for (const name of booleans) if (copy[name] !== null && copy[name] !== undefined) copy[name] = Number(copy[name]) === 1;
      return copy;
    });
    for (let index = 0; index < converted.length; index += 200)
      await target
        .insertInto(table.name)
        .values(converted.slice(index, index + 200))
        .execute();
  }
}

/** The columns of one table, by name (for fixtures that fill only what a product has). */
export const columnNames = (product: Product, table: string) => new Set(tableOf(SCHEMAS[product], table).columns.map(([name]) => name));
