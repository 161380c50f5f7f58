import type { Generated } from 'kysely';

/** One line of a batch the gateway runs itself (migration 0030); its batch is a `tasks` row of kind 'batch'. */
export interface BatchLinesTable {
  /** The batch's task id ("batch_..."). */
  task_id: string;
  /** Its place in the input file, from 0. */
  line: number;
  custom_id: string;
  /** The request's body, as JSON. */
  body: string;
  /** What the task holds for this line (the relay's bound for the same request). */
  bound: number;
  /** queued, running, completed, failed, cancelled, expired. */
  status: string;
  /** The lease of the run under way (a token of the node's), until lease_until (ms). */
  lease_owner: string | null;
  lease_until: Generated<number>;
  attempts: Generated<number>;
  /** What its settlement charged (at the batch discount). */
  charged_quota: Generated<number>;
  /** The HTTP status of its answer (0 until it ran). */
  status_code: Generated<number>;
  /** Its line of the output or error file, as JSON. */
  result: string | null;
  /** Unix seconds. */
  updated_at: number;
}

export interface BatchLinesSchema {
  batch_lines: BatchLinesTable;
}
