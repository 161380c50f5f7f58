// Frozen: the relay durations of each channel rollup row as a sketch
// (repositories/latencySketch.ts): bucket counts as a JSON text, merged by
// the rollup writer. Null on the rows written before it (their latency lives
// only in the bucket-bound counters, which give no percentile worth showing).
// Only the channels' tables: the dashboard reads latency per channel, and the
// whole-key tables would make every batch merge one sketch per user and token.
import type { Kysely } from 'kysely';

const TABLES = ['usage_hourly_channels', 'usage_daily_channels'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).addColumn('latency_sketch', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('latency_sketch').execute();
}
