// Mapping the source's options (settings): only keys Switchboard knows, and
// none with --merge (the target keeps its own). Price tables are merged into
// ours (the source's prices win; models it never priced keep ours); a link
// must be http(s) or a site path.
import type { Kysely } from 'kysely';
import { isOptionKey, isSafeLink, isUrlOption, isValidRatioJson, OPTION_SPECS } from '../../common/options';
import type { Database } from '../db/database';
import { targetOptionValues } from '../repositories/importRows';
import { Outcome } from './outcome';
import type { Plan } from './plan';
import { text, type Row } from './sourceValues';

const RATIO_OPTIONS = new Set(['ModelRatio', 'CompletionRatio', 'GroupRatio', 'ModelMaxOutputTokens']);

/** The options to write, and the source's keys that mean nothing here. */
export async function mapOptions(
  db: Kysely<Database>,
  sourceOptions: Row[],
  merge: boolean,
): Promise<{ outcome: Outcome; options: Plan['options']; unknownOptions: string[] }> {
  const outcome = new Outcome('options', sourceOptions.length);
  const unknownOptions: string[] = [];
  const optionRows: Plan['options'] = [];
  const targetOptions = await targetOptionValues(db);
  for (const row of sourceOptions) {
    const key = text(row.key);
    const value = text(row.value);
    if (!isOptionKey(key)) {
      unknownOptions.push(key);
      outcome.leave('no meaning in Switchboard', key);
    } else if (merge) {
      outcome.leave("--merge keeps the target's own settings", key);
    } else if (RATIO_OPTIONS.has(key)) {
      if (!isValidRatioJson(value)) outcome.leave('not a JSON object of numbers', key);
      // the source's prices win; models it never priced keep ours
      else
        optionRows.push({
          key,
          value: JSON.stringify({ ...JSON.parse(targetOptions.get(key) ?? OPTION_SPECS[key].default), ...JSON.parse(value) }),
        });
    } else if (isUrlOption(key) && !isSafeLink(value)) {
      outcome.leave('not an http(s) link or a site path', key);
    } else {
      optionRows.push({ key, value });
    }
  }
  outcome.carried = optionRows.length;
  return { outcome, options: optionRows, unknownOptions };
}
