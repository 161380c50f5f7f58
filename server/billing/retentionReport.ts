// What the Settings panel "Stored rows and retention" shows (GET /api/retention/):
// per kind its rows, its room on disk, its retention and its last prune, and
// the prune running now or the last one. Counting the rows and sizing the
// tables reads a whole table on some databases (count(*) on PostgreSQL, dbstat
// on SQLite), and the console asks every second while a prune runs: so both
// are kept for a minute per process, and counted again once a prune has ended.
import type { Kysely } from 'kysely';
import type { PruneJob, RetentionKindReport, RetentionReport } from '../../common/retention';
import type { Database } from '../db/database';
import { lastPruneRuns, tableSize, type PruneRunRow, type TableSize } from '../repositories/retention';
import type { RetentionKind } from './retentionKinds';
import { currentPruneJob, type RetentionDeps } from './retentionJob';

const KEEP_COUNTS_MS = 60_000;

interface Counted {
  /** Unix ms when counted. */
  at: number;
  rows: Map<string, number>;
  sizes: Map<string, TableSize>;
}

// keyed by the database handle: one per app
const counts = new WeakMap<Kysely<Database>, Counted>();

async function countNow(deps: RetentionDeps, kinds: readonly RetentionKind[]): Promise<Counted> {
  const counted: Counted = { at: Date.now(), rows: new Map(), sizes: new Map() };
  for (const kind of kinds) {
    counted.rows.set(kind.name, await kind.count(deps.db));
    if (!counted.sizes.has(kind.table)) counted.sizes.set(kind.table, await tableSize(deps.db, deps.dialect, kind.table));
  }
  return counted;
}

/** The counts kept, unless they are older than a minute, older than the end of the last prune, or asked afresh. */
async function countsOf(deps: RetentionDeps, kinds: readonly RetentionKind[], job: PruneJob | null, fresh: boolean): Promise<Counted> {
  const kept = counts.get(deps.db);
  const stale =
    !kept ||
    fresh ||
    Date.now() - kept.at > KEEP_COUNTS_MS ||
    (job !== null && job.state !== 'running' && (job.finished_at + 1) * 1000 > kept.at) ||
    kinds.some((kind) => !kept.rows.has(kind.name));
  if (!stale) return kept;
  const counted = await countNow(deps, kinds);
  counts.set(deps.db, counted);
  return counted;
}

/** A kind's share of its table's size: the table's bytes split among the kinds living in it by their rows. */
function sizeOf(kind: RetentionKind, kinds: readonly RetentionKind[], counted: Counted): { bytes: number; estimated: boolean } {
  const table = counted.sizes.get(kind.table) ?? { bytes: 0, estimated: true };
  const sharing = kinds.filter((other) => other.table === kind.table);
  if (sharing.length === 1) return table;
  const rowsOf = (other: RetentionKind) => counted.rows.get(other.name) ?? 0;
  const all = sharing.reduce((sum, other) => sum + rowsOf(other), 0);
  const share = all === 0 ? 1 / sharing.length : rowsOf(kind) / all;
  return { bytes: Math.round(table.bytes * share), estimated: true };
}

function lastRunOf(row: PruneRunRow | undefined): RetentionKindReport['last_run'] {
  if (!row) return null;
  return {
    started_at: Number(row.started_at),
    finished_at: Number(row.finished_at),
    removed: Number(row.removed),
    cutoff: Number(row.cutoff),
    manual: Number(row.manual) === 1,
  };
}

/** The panel's report; `fresh` counts the rows again whatever was kept. */
export async function retentionReport(deps: RetentionDeps, fresh = false): Promise<RetentionReport> {
  const { kinds } = deps;
  const job = await currentPruneJob(deps.jobs);
  const counted = await countsOf(deps, kinds, job, fresh);
  const runs = new Map((await lastPruneRuns(deps.db)).map((row) => [row.kind, row]));
  return {
    kinds: kinds.map((kind) => {
      const size = sizeOf(kind, kinds, counted);
      return {
        name: kind.name,
        option_key: kind.optionKey,
        days: kind.days(deps.options),
        rows: counted.rows.get(kind.name) ?? 0,
        size_bytes: size.bytes,
        size_estimated: size.estimated,
        last_run: lastRunOf(runs.get(kind.name)),
      };
    }),
    job,
  };
}
