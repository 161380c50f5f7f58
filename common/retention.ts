// What the Settings panel "Stored rows and retention" reads (GET /api/retention/)
// and starts (POST /api/retention/prune): per kind of stored rows, how many
// there are, their room on disk, how long they are kept and the last prune;
// and the prune running now, or the last one, with its progress.

/** The last prune of one kind, as every node reads it (the prune_runs table). */
export interface PruneRun {
  /** Unix seconds. */
  started_at: number;
  finished_at: number;
  /** Rows it deleted. */
  removed: number;
  /** Rows stored before this (unix seconds) were past their retention. */
  cutoff: number;
  /** Started with "Prune now" rather than by the hourly schedule. */
  manual: boolean;
}

/** One kind of stored rows on the panel. */
export interface RetentionKindReport {
  /** Stable name: `logs`, `error_logs`, `audit`; the console's label key. */
  name: string;
  /** The option that holds its retention in days (common/options.ts). */
  option_key: string;
  /** Days its rows are kept, as the prune applies them; 0 keeps them forever. */
  days: number;
  rows: number;
  size_bytes: number;
  /** The size is a share of a table other kinds live in too, or a guess from page counts (SQLite without dbstat). */
  size_estimated: boolean;
  last_run: PruneRun | null;
}

/** One kind's part of a prune. */
export interface PruneJobKind {
  name: string;
  /** Rows past its retention when the prune started. */
  total: number;
  removed: number;
}

/** A prune across the kinds: the one running now, or the last one. */
export interface PruneJob {
  id: string;
  /** `stopped`: the node running it shut down or lost its lease; `failed`: the database refused. */
  state: 'running' | 'done' | 'stopped' | 'failed';
  manual: boolean;
  /** Unix seconds; finished_at is 0 while it runs. */
  started_at: number;
  finished_at: number;
  /** Rows to remove, counted when it started, and removed so far. */
  total: number;
  removed: number;
  kinds: PruneJobKind[];
}

/** GET /api/retention/. */
export interface RetentionReport {
  kinds: RetentionKindReport[];
  /** The prune running now on any node, else the last one any node shared; null before the first. */
  job: PruneJob | null;
}

/** POST /api/retention/prune: the prune started, or the one already running (`started` false). */
export interface PruneStart {
  started: boolean;
  job: PruneJob;
}
