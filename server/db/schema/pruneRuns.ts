/** The last prune of each kind of stored rows: see migration 0026. */
export interface PruneRunsTable {
  /** The kind's name (server/billing/retentionKinds.ts). */
  kind: string;
  /** Unix seconds. */
  started_at: number;
  finished_at: number;
  removed: number;
  /** Rows stored before this (unix seconds) were removed. */
  cutoff: number;
  /** 1 when started with "Prune now". */
  manual: number;
}

export interface PruneRunsSchema {
  prune_runs: PruneRunsTable;
}
