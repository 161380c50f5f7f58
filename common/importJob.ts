/** A step of the import from one-api or new-api, in the order it runs. */
export type ImportStep = 'read' | 'users' | 'tokens' | 'channels' | 'redemptions' | 'options' | 'logs' | 'done';

/** How far the import is: rows of the step done out of its total. */
export interface ImportProgress {
  step: ImportStep;
  done: number;
  total: number;
}

/** What GET /api/import/ answers: the console import's state on the server that runs it. */
export interface ImportJobState {
  running: boolean;
  /** The source without its password; empty before the first import. */
  source: string;
  /** Whether it writes (false: a dry run). */
  apply: boolean;
  progress?: ImportProgress;
  /** The report as `npm run import` prints it, once the run is over. */
  report?: string;
  /** Why nothing was written: the target holds data and merge was not asked for. */
  refused?: string;
  error?: string;
  started_at?: number;
  finished_at?: number;
}
