// The settings save rules (when a change saves, what it must pass), kept free of React so they are easy to
// test: only changed values are sent, empty secrets are skipped, and invalid
// ratio JSON stops the whole section before anything is sent.
import { isValidJsonOption, OPTION_SPECS, type OptionKey } from '../../common/options';

export interface OptionChange {
  key: OptionKey;
  value: string;
}

/** The values of a section's fields (toggles excluded: they save at once) that differ from what is stored. */
export function pendingChanges(
  keys: OptionKey[],
  saved: Partial<Record<OptionKey, string>>,
  drafts: Partial<Record<OptionKey, string>>,
): OptionChange[] {
  const changes: OptionChange[] = [];
  for (const key of keys) {
    const draft = drafts[key];
    const kind = OPTION_SPECS[key].kind;
    if (draft === undefined || kind === 'toggle') continue;
    if (kind === 'secret' ? draft === '' : draft === (saved[key] ?? '')) continue;
    changes.push({ key, value: draft });
  }
  return changes;
}

/** The message key for the first change whose ratio JSON is invalid, if any. */
export function invalidChangeMessage(changes: OptionChange[]): string | undefined {
  const invalid = changes.find((change) => OPTION_SPECS[change.key].kind === 'json' && !isValidJsonOption(change.key, change.value));
  if (!invalid) return undefined;
  if (invalid.key === 'GroupRateLimits') return 'settings.errors.group_rate_limits_json';
  if (invalid.key === 'ModelFallbacks') return 'settings.errors.model_fallbacks_json';
  return invalid.key === 'GroupRatio' ? 'settings.errors.group_ratio_json' : 'settings.errors.model_ratio_json';
}

/** Adds a domain to the comma-joined whitelist: only a non-empty entry that is not there yet. */
export function addToList(list: string, entry: string): string | undefined {
  const item = entry.trim();
  const items = splitList(list);
  if (item === '' || items.includes(item)) return undefined;
  return [...items, item].join(',');
}

export function splitList(list: string): string[] {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
