// The routing settings the console edits and the relay reads: which upstream
// statuses send a request on to the next channel, and the fallback models a
// group's request moves to when no channel of the asked model can answer.
// Console and server parse them with the same functions.
import { jsonObjectOf } from './validation';

/** Statuses retried on another channel unless the operator says otherwise: timeouts, rate limits, and the upstream's own failures. */
export const DEFAULT_RETRYABLE_STATUSES = '408,429,500-599';

/**
 * A status list such as "408,429,500-599" as a test of one status, or
 * undefined when an entry is not a status (100-599) or a range of them.
 */
export function parseStatusList(raw: string): ((status: number) => boolean) | undefined {
  const singles = new Set<number>();
  const ranges: Array<[number, number]> = [];
  for (const entry of raw.split(',')) {
    const item = entry.trim();
    if (item === '') continue;
    const match = /^(\d{3})(?:\s*-\s*(\d{3}))?$/.exec(item);
    if (!match) return undefined;
    const low = Number(match[1]);
    const high = match[2] === undefined ? low : Number(match[2]);
    if (low < 100 || high > 599 || high < low) return undefined;
    if (low === high) singles.add(low);
    else ranges.push([low, high]);
  }
  return (status) => singles.has(status) || ranges.some(([low, high]) => status >= low && status <= high);
}

/** Fallback models by group ("*" for every group), then by asked model: {"default": {"gpt-4o": ["claude-sonnet-4-5"]}}. */
export type ModelFallbacks = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** The ModelFallbacks option, or undefined when it is not that shape (a model that falls back to itself included). */
export function parseModelFallbacks(raw: string): ModelFallbacks | undefined {
  const parsed = jsonObjectOf(raw);
  if (!parsed) return undefined;
  for (const byModel of Object.values(parsed)) {
    if (!isPlainObject(byModel)) return undefined;
    for (const [model, list] of Object.entries(byModel)) {
      if (!Array.isArray(list) || list.length > 10) return undefined;
      if (!list.every((item) => typeof item === 'string' && item.trim() !== '' && item !== model)) return undefined;
    }
  }
  return parsed as ModelFallbacks;
}

/** The models a group's request for `model` falls back to, in order: the group's own list, else the list for every group. */
export function fallbacksOf(fallbacks: ModelFallbacks, group: string, model: string): readonly string[] {
  return fallbacks[group]?.[model] ?? fallbacks['*']?.[model] ?? [];
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
