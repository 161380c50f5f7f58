// What the report says of each table: the rows carried and those left out,
// by reason, with a few examples (ids and names, never keys); and the source
// settings that have no place here, counted per field.
import type { Row } from './sourceValues';

export interface TableOutcome {
  table: string;
  /** Rows in the source. */
  source: number;
  /** Rows carried over (or that would be, in a dry run). */
  carried: number;
  /** Rows left out, by reason, with a few examples (ids and names, never keys). */
  leftOut: Array<{ reason: string; count: number; examples: string[] }>;
}

/** One table's left-out rows, by reason. */
export class Outcome {
  readonly leftOut = new Map<string, { count: number; examples: string[] }>();
  carried = 0;
  constructor(
    readonly table: string,
    readonly source: number,
  ) {}
  leave(reason: string, example: string) {
    const entry = this.leftOut.get(reason) ?? { count: 0, examples: [] };
    entry.count += 1;
    if (entry.examples.length < 5) entry.examples.push(example);
    this.leftOut.set(reason, entry);
  }
  toJSON(): TableOutcome {
    return {
      table: this.table,
      source: this.source,
      carried: this.carried,
      leftOut: [...this.leftOut].map(([reason, entry]) => ({ reason, ...entry })),
    };
  }
}

/** Counts the rows where a source field that has no place here is set. */
export class Uncarried {
  private readonly counts = new Map<string, number>();
  note(table: string, row: Row, fields: readonly string[]) {
    for (const field of fields) {
      const value = row[field];
      if (value === null || value === undefined || value === '' || value === 0 || value === false || value === '0' || value === '{}')
        continue;
      const label = `${table}.${field}`;
      this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    }
  }
  list(): string[] {
    return [...this.counts].map(([label, count]) => `${label} (set on ${count} row${count === 1 ? '' : 's'})`);
  }
}

/** Source fields Switchboard has no column or meaning for. */
export const UNCARRIED_FIELDS = {
  users: [
    'lark_id',
    'oidc_id',
    'telegram_id',
    'discord_id',
    'linux_do_id',
    'aff_count',
    'aff_quota',
    'aff_history',
    'setting',
    'remark',
    'stripe_customer',
  ],
  tokens: ['group', 'cross_group_retry', 'billing_type'],
  channels: [
    'config',
    'system_prompt',
    'tag',
    'setting',
    'settings',
    'param_override',
    'header_override',
    'status_code_mapping',
    'openai_organization',
    'remark',
    'other_info',
  ],
  redemptions: ['expired_time'],
} as const;
