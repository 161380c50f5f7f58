// Frozen: the hourly usage rollups the dashboard and the log stats read
// instead of scanning logs. One row per (hour, user, token, model, channel):
// what the consume logs of that hour came to, the relayed requests that failed
// there, and their latency as counts per bucket (upper bounds in ms, the last
// column for anything slower). The relay writes them in the transaction that
// writes the consume logs (repositories/usageRollups.ts); this migration
// back-fills them from the logs already there, in one INSERT ... SELECT.
import { MysqlAdapter, sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

/** The latency buckets as they were when this migration was written (common/dashboard.ts's LATENCY_BUCKETS_MS). */
const BUCKETS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];
const BUCKET_COLUMNS = [...BUCKETS_MS.map((bound) => `latency_le_${bound}`), 'latency_over'];
const COUNTERS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'quota', 'latency_ms_sum', ...BUCKET_COLUMNS];

const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);
/** Consume logs' type (common/roles.ts LogType.consume). */
const CONSUME = 2;

export async function up(db: Kysely<any>): Promise<void> {
  const mysql = db.getExecutor().adapter instanceof MysqlAdapter;
  let table = db.schema
    .createTable('usage_hourly')
    .addColumn('hour', 'bigint', (column) => column.notNull())
    .addColumn('user_id', 'bigint', (column) => column.notNull())
    .addColumn('token_id', 'bigint', (column) => column.notNull())
    // byte for byte on MySQL too, so 'GPT-4' and 'gpt-4' stay two models as they are in the logs
    .addColumn('model', mysql ? sql`varchar(128) character set utf8mb4 collate utf8mb4_bin` : 'varchar(128)', (column) => column.notNull())
    .addColumn('channel_id', 'bigint', (column) => column.notNull());
  for (const counter of COUNTERS) table = table.addColumn(counter, 'bigint', zero);
  await table.addPrimaryKeyConstraint('usage_hourly_pk', ['hour', 'user_id', 'token_id', 'model', 'channel_id']).execute();
  // the admin's range scans use the primary key; a user's dashboard and each filter have their own
  for (const column of ['user_id', 'token_id', 'channel_id', 'model']) {
    await db.schema.createIndex(`usage_hourly_${column}_hour_idx`).on('usage_hourly').columns([column, 'hour']).execute();
  }

  const buckets = BUCKETS_MS.map((bound, index) => {
    const lower = index === 0 ? '' : `elapsed_ms > ${BUCKETS_MS[index - 1]} and `;
    return `sum(case when ${lower}elapsed_ms <= ${bound} then 1 else 0 end)`;
  });
  buckets.push(`sum(case when elapsed_ms > ${BUCKETS_MS[BUCKETS_MS.length - 1]} then 1 else 0 end)`);
  await sql
    .raw(
      `insert into usage_hourly (hour, user_id, token_id, model, channel_id, ${COUNTERS.join(', ')})
       select created_at - created_at % 3600, user_id, token_id, model_name, channel_id,
              count(*), 0, sum(prompt_tokens), sum(completion_tokens), sum(quota), sum(elapsed_ms), ${buckets.join(', ')}
       from logs where type = ${CONSUME}
       group by created_at - created_at % 3600, user_id, token_id, model_name, channel_id`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('usage_hourly').execute();
}
