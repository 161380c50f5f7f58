// Frozen: the usage rollups the dashboard and the log stats read instead of
// scanning logs. Each table sums the consume logs of a period (an hour or a
// day) per key, with the relayed requests that failed there and their latency
// as counts per bucket (upper bounds in ms, the last column for anything
// slower). Three keys at each period (four by day), so that every question reads the
// narrowest table that can answer it: the whole key (user, token, model,
// channel), the channels' (model, channel: the admin's series, models and
// channels), the tokens' (user, token: the admin's top tokens), and by day
// the users' too (user: the admin's top users, a few times fewer rows than
// the tokens' over a month; by hour nearly as many, so none).
// The relay writes them in the transaction that writes the consume logs
// (repositories/usageRollups.ts); this migration back-fills them from the
// logs already there, one INSERT ... SELECT ... GROUP BY each.
import { MysqlAdapter, sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

/** The latency buckets as they were when this migration was written (common/dashboard.ts's LATENCY_BUCKETS_MS). */
const BUCKETS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];
const BUCKET_COLUMNS = [...BUCKETS_MS.map((bound) => `latency_le_${bound}`), 'latency_over'];
const COUNTERS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'quota', 'latency_ms_sum', ...BUCKET_COLUMNS];

const TABLES: Array<{ name: string; seconds: number; key: string[]; indexes: string[]; covering?: string[] }> = [
  {
    name: 'usage_hourly',
    seconds: 3600,
    key: ['user_id', 'token_id', 'model', 'channel_id'],
    indexes: ['user_id', 'token_id', 'model', 'channel_id'],
  },
  { name: 'usage_hourly_channels', seconds: 3600, key: ['model', 'channel_id'], indexes: [] },
  { name: 'usage_hourly_tokens', seconds: 3600, key: ['user_id', 'token_id'], indexes: ['user_id'] },
  {
    name: 'usage_daily',
    seconds: 86_400,
    key: ['user_id', 'token_id', 'model', 'channel_id'],
    indexes: ['user_id', 'token_id', 'model', 'channel_id'],
  },
  { name: 'usage_daily_channels', seconds: 86_400, key: ['model', 'channel_id'], indexes: [] },
  // the top tokens of a long range group ~100k of these rows: from an index that holds every column they read, not the table
  {
    name: 'usage_daily_tokens',
    seconds: 86_400,
    key: ['user_id', 'token_id'],
    indexes: ['user_id'],
    covering: ['period', 'token_id', 'quota', 'requests', 'errors', 'prompt_tokens', 'completion_tokens'],
  },
  { name: 'usage_daily_users', seconds: 86_400, key: ['user_id'], indexes: [] },
];

/** Each key column's place in logs. */
const FROM_LOGS: Record<string, string> = { user_id: 'user_id', token_id: 'token_id', model: 'model_name', channel_id: 'channel_id' };

const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);
/** Consume logs' type (common/roles.ts LogType.consume). */
const CONSUME = 2;

export async function up(db: Kysely<any>): Promise<void> {
  const mysql = db.getExecutor().adapter instanceof MysqlAdapter;
  const buckets = BUCKETS_MS.map((bound, index) => {
    const lower = index === 0 ? '' : `elapsed_ms > ${BUCKETS_MS[index - 1]} and `;
    return `sum(case when ${lower}elapsed_ms <= ${bound} then 1 else 0 end)`;
  });
  buckets.push(`sum(case when elapsed_ms > ${BUCKETS_MS[BUCKETS_MS.length - 1]} then 1 else 0 end)`);

  for (const { name, seconds, key, indexes, covering } of TABLES) {
    let table = db.schema.createTable(name).addColumn('period', 'bigint', (column) => column.notNull());
    for (const column of key) {
      // byte for byte on MySQL too, so 'GPT-4' and 'gpt-4' stay two models as they are in the logs
      if (column === 'model')
        table = table.addColumn(
          'model',
          mysql ? sql`varchar(128) character set utf8mb4 collate utf8mb4_bin` : 'varchar(128)',
          (definition) => definition.notNull(),
        );
      else table = table.addColumn(column, 'bigint', (definition) => definition.notNull());
    }
    for (const counter of COUNTERS) table = table.addColumn(counter, 'bigint', zero);
    await table.addPrimaryKeyConstraint(`${name}_pk`, ['period', ...key] as never[]).execute();
    for (const column of indexes)
      await db.schema.createIndex(`${name}_${column}_period_idx`).on(name).columns([column, 'period']).execute();
    if (covering) await db.schema.createIndex(`${name}_covering_idx`).on(name).columns(covering).execute();

    const period = `created_at - created_at % ${seconds}`;
    const keyFromLogs = key.map((column) => FROM_LOGS[column]);
    await sql
      .raw(
        `insert into ${name} (period, ${key.join(', ')}, ${COUNTERS.join(', ')})
         select ${period}, ${keyFromLogs.join(', ')},
                count(*), 0, sum(prompt_tokens), sum(completion_tokens), sum(quota), sum(elapsed_ms), ${buckets.join(', ')}
         from logs where type = ${CONSUME}
         group by ${period}, ${keyFromLogs.join(', ')}`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const { name } of [...TABLES].reverse()) await db.schema.dropTable(name).execute();
}
