// The runtime settings: defaults from common/options.ts, overlaid with the rows
// in the database, cached in memory and validated before anything is written.
import type { Kysely } from 'kysely';
import { OPTION_SPECS, isOptionKey, parseToggle, type OptionKey } from '../../common/options';
import type { Database } from '../db/database';
import { loadOptionRows, saveOption } from '../repositories/options';

export class OptionError extends Error {}

const JSON_OPTION_NAMES: Partial<Record<OptionKey, string>> = {
  ModelRatio: 'model ratio',
  GroupRatio: 'group ratio',
};

/** Checks a value against its key's kind; returns the normalised string or throws OptionError. */
export function validateOption(key: OptionKey, raw: string): string {
  const spec = OPTION_SPECS[key];
  switch (spec.kind) {
    case 'toggle':
      if (raw !== 'true' && raw !== 'false') throw new OptionError(`${key} must be "true" or "false"`);
      return raw;
    case 'number': {
      const trimmed = raw.trim();
      if (trimmed === '' || !Number.isFinite(Number(trimmed))) throw new OptionError(`${key} must be a number`);
      if (Number(trimmed) < 0) throw new OptionError(`${key} must not be negative`);
      return trimmed;
    }
    case 'json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        parsed = undefined;
      }
      const valid =
        parsed !== null &&
        typeof parsed === 'object' &&
        !Array.isArray(parsed) &&
        Object.values(parsed as object).every((value) => typeof value === 'number' && Number.isFinite(value) && value >= 0);
      if (!valid) throw new OptionError(`${JSON_OPTION_NAMES[key] ?? key} is not a valid JSON string`);
      return raw;
    }
    case 'list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter((item, index, all) => item !== '' && all.indexOf(item) === index)
        .join(',');
    default:
      return raw;
  }
}

export class OptionStore {
  private readonly values = new Map<OptionKey, string>();
  private readonly parsedJson = new Map<OptionKey, Record<string, number>>();

  constructor(private readonly db: Kysely<Database>) {
    for (const key of Object.keys(OPTION_SPECS) as OptionKey[]) this.values.set(key, OPTION_SPECS[key].default);
  }

  /** Re-reads every stored row over the defaults. Rows with invalid values are ignored, not applied. */
  async reload(): Promise<void> {
    for (const row of await loadOptionRows(this.db)) {
      if (!isOptionKey(row.key)) continue;
      try {
        this.apply(row.key, validateOption(row.key, row.value));
      } catch {
        // a bad stored value keeps the default rather than poisoning prices
      }
    }
  }

  private apply(key: OptionKey, value: string): void {
    this.values.set(key, value);
    this.parsedJson.delete(key);
  }

  get(key: OptionKey): string {
    return this.values.get(key) ?? OPTION_SPECS[key].default;
  }

  bool(key: OptionKey): boolean {
    return parseToggle(this.get(key));
  }

  number(key: OptionKey): number {
    const value = Number(this.get(key));
    return Number.isFinite(value) ? value : Number(OPTION_SPECS[key].default);
  }

  json(key: OptionKey): Record<string, number> {
    let parsed = this.parsedJson.get(key);
    if (!parsed) {
      parsed = JSON.parse(this.get(key)) as Record<string, number>;
      this.parsedJson.set(key, parsed);
    }
    return parsed;
  }

  /** Validates, writes to the database, then updates the cache. Nothing is written when validation fails. */
  async set(key: OptionKey, raw: string): Promise<void> {
    const value = validateOption(key, raw);
    await saveOption(this.db, key, value);
    this.apply(key, value);
  }
}
