// The kinds of stored rows that expire: the lines of the Settings panel
// "Stored rows and retention" and the steps of a prune (retentionJob.ts).
// A kind is its name, the option holding its retention in days, the table its
// rows live in (for the size on disk), how to count its rows and those past
// retention, and how to delete those. The list of kinds is one line each in
// plugins/retention.ts (it names kinds of folders billing may not import).
//
// A table with a time column in unix seconds is one call of retentionKind():
//   retentionKind({ name: 'audit', optionKey: 'AuditRetentionDays', table: 'audit_log', prune: pruneAudit })
// where prune(db, cutoff, progress) deletes the rows created before cutoff
// (unix seconds), a batch at a time, calls progress.removed(n) after each batch,
// stops when progress.signal aborts and resolves to how many went.
import type { Kysely } from 'kysely';
import type { OptionKey } from '../../common/options';
import type { Database } from '../db/database';
import { countLogs, type LogSelection } from '../repositories/logRetention';
import { countTableRows } from '../repositories/retention';
import { pruneLogs } from './logRetention';

/** What a prune reports to and hears from the job while it deletes. */
export interface PruneProgress {
  /** Aborts when the node shuts down or loses the job's lease: stop after the batch under way. */
  signal: AbortSignal;
  /** Called after each batch with the rows it deleted. */
  removed(count: number): void;
}

/** How a kind reads its retention. */
export interface RetentionOptions {
  number(key: OptionKey): number;
}

export interface RetentionKind {
  /** Stable: the API's, the console's label key and prune_runs.kind. */
  name: string;
  /** The option holding the retention in days. */
  optionKey: OptionKey;
  /** The table its rows live in; kinds sharing a table share its size by their rows. */
  table: string;
  /** Days its rows are kept as the prune applies them; 0 keeps them forever. */
  days(options: RetentionOptions): number;
  count(db: Kysely<Database>): Promise<number>;
  /** Rows created before `cutoff` (unix seconds). */
  countBefore(db: Kysely<Database>, cutoff: number): Promise<number>;
  /** Deletes the rows created before `cutoff`; resolves to how many went. */
  prune(db: Kysely<Database>, cutoff: number, progress: PruneProgress): Promise<number>;
}

/** A whole number of days from an option: anything else (negative, not a number) keeps rows forever. */
export function optionDays(options: RetentionOptions, key: OptionKey): number {
  const days = Math.floor(options.number(key));
  return days > 0 ? days : 0;
}

/** A kind whose table has a time column (`created_at` unless named) in unix seconds. */
export function retentionKind(
  kind: Pick<RetentionKind, 'name' | 'optionKey' | 'table' | 'prune'> & Partial<RetentionKind> & { timeColumn?: string },
): RetentionKind {
  const { timeColumn = 'created_at', ...rest } = kind;
  return {
    days: (options) => optionDays(options, kind.optionKey),
    count: (db) => countTableRows(db, kind.table),
    countBefore: (db, cutoff) => countTableRows(db, kind.table, { column: timeColumn, value: cutoff }),
    ...rest,
  };
}

/** The logs of one selection, pruned by pruneLogs. */
function logKind(name: string, optionKey: OptionKey, selection: LogSelection, days: RetentionKind['days']): RetentionKind {
  return retentionKind({
    name,
    optionKey,
    table: 'logs',
    days,
    count: (db) => countLogs(db, selection),
    countBefore: (db, cutoff) => countLogs(db, selection, cutoff),
    prune: (db, cutoff, progress) =>
      pruneLogs(db, cutoff, { selection, signal: progress.signal, onDeleted: (count) => progress.removed(count) }),
  });
}

/** Every log but the error logs: consumption, top-ups, management and system logs. */
export const relayLogs = logKind('logs', 'LogRetentionDays', 'others', (options) => optionDays(options, 'LogRetentionDays'));

/** Failed relayed calls (type 5); ErrorLogRetentionDays 0 keeps them as long as the other logs. */
export const errorLogs = logKind(
  'error_logs',
  'ErrorLogRetentionDays',
  'errors',
  (options) => optionDays(options, 'ErrorLogRetentionDays') || optionDays(options, 'LogRetentionDays'),
);
