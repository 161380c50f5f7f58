// Reading the source: every table the import maps, whole and in memory (so a
// dry run and an import plan the same), and how many logs there are to copy.
// A table the source does not have reads as empty.
import { sourceLogCount, sourceOptionRows, sourceTableRows } from '../repositories/importRows';
import { Outcome } from './outcome';
import type { SourceDatabase } from './source';
import { num, type Row } from './sourceValues';

/** The source's rows, table by table. */
export interface SourceRows {
  users: Row[];
  tokens: Row[];
  channels: Row[];
  redemptions: Row[];
  options: Row[];
}

async function readTable(source: SourceDatabase, table: string): Promise<Row[]> {
  if (!source.columns.has(table)) return [];
  const rows = await sourceTableRows(source.db, table);
  // PostgreSQL returns column names as created; GORM creates them lower case, but be lenient
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key.toLowerCase(), value])));
}

async function readOptions(source: SourceDatabase): Promise<Row[]> {
  if (!source.columns.has('options')) return [];
  return await sourceOptionRows(source.db);
}

/** Every table the import maps, read at once. */
export async function readSource(source: SourceDatabase): Promise<SourceRows> {
  const [users, tokens, channels, redemptions, options] = await Promise.all([
    readTable(source, 'users'),
    readTable(source, 'tokens'),
    readTable(source, 'channels'),
    readTable(source, 'redemptions'),
    readOptions(source),
  ]);
  return { users, tokens, channels, redemptions, options };
}

/** With --with-logs and a logs table: the logs' outcome (all of them carried) and their count. */
export async function countLogs(source: SourceDatabase, withLogs: boolean | undefined): Promise<{ outcome?: Outcome; count: number }> {
  if (!withLogs || !source.columns.has('logs')) return { count: 0 };
  const count = num(await sourceLogCount(source.db));
  const outcome = new Outcome('logs', count);
  outcome.carried = count;
  return { outcome, count };
}
