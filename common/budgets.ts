/**
 * Budgets that reset: a key or a user may have a spending cap per day, week
 * or month beside its lifetime quota. Shared by the server (enforcement,
 * validation, the spend it writes) and the console (forms, the key list).
 *
 * A period starts at local midnight in the operator's time zone (the TimeZone
 * option, else the server's): a day at every midnight, a week on Monday, a
 * month on the 1st. The spend of a key or user is stored with the start of
 * the period it belongs to (`period_start`, Unix seconds); a spend whose start
 * is not the current period's counts as nothing, so no job has to reset it.
 */

export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;

/** '' = no budget. */
export type BudgetPeriod = '' | (typeof BUDGET_PERIODS)[number];

/** The largest budget a form accepts, in quota units (as large as any quota field). */
export const MAX_BUDGET_QUOTA = Number.MAX_SAFE_INTEGER;

/** A key's or user's budget as it travels on the console API. */
export interface BudgetFields {
  /** '' = no budget. */
  budget_period: BudgetPeriod;
  /** The cap per period, in quota units (0 with no budget). */
  budget_quota: number;
}

/** What a list shows of a budget: the spend of the current period and when the period ends. */
export interface BudgetUsage {
  /** Quota charged in the current period (0 when the stored spend belongs to an earlier one). */
  spent: number;
  /** Unix seconds: when the current period began and when the next begins. */
  period_start: number;
  resets_at: number;
}

export function isBudgetPeriod(value: unknown): value is BudgetPeriod {
  return value === '' || (BUDGET_PERIODS as readonly unknown[]).includes(value);
}

/** Whether `zone` is a time zone Intl knows (an IANA name such as `Asia/Shanghai`, or `UTC`). */
export function isTimeZone(zone: string): boolean {
  if (!zone) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone to use: the option's when set and valid, else the process's own. */
export function effectiveTimeZone(option: string | undefined): string {
  const zone = option?.trim();
  return zone && isTimeZone(zone) ? zone : Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Formatters by zone: making one costs far more than using it (bounded: zones come from one option). */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    if (formatters.size >= 64) formatters.clear();
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The wall clock of `zone` at the instant `ms`, as the fields of a UTC date (month 0-based). */
function wallClock(ms: number, zone: string) {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(zone).formatToParts(ms)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return { year: parts.year, month: parts.month - 1, day: parts.day, hour: parts.hour % 24, minute: parts.minute, second: parts.second };
}

/** How far `zone`'s clock is ahead of UTC at the instant `ms`, in ms. */
function offsetAt(ms: number, zone: string): number {
  const wall = wallClock(ms, zone);
  return Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of local midnight starting the given local date (month 0-based;
 * day may run past the month, as with Date.UTC). The offset is read at the
 * guess and read again where it lands, so a change of offset (summer time)
 * between the two is taken into account.
 */
function localMidnight(year: number, month: number, day: number, zone: string): number {
  const wall = Date.UTC(year, month, day);
  let instant = wall - offsetAt(wall, zone);
  instant = wall - offsetAt(instant, zone);
  return instant;
}

/** When the period containing `now` (ms) began and when the next begins, in Unix seconds. */
export function budgetPeriodAt(period: Exclude<BudgetPeriod, ''>, now: number, zone: string): { start: number; end: number } {
  const { year, month, day } = wallClock(now, zone);
  let start: number;
  let end: number;
  if (period === 'day') {
    start = localMidnight(year, month, day, zone);
    end = localMidnight(year, month, day + 1, zone);
  } else if (period === 'week') {
    // getUTCDay of the local date: 0 = Sunday; weeks begin on Monday
    const sinceMonday = (new Date(Date.UTC(year, month, day)).getUTCDay() + 6) % 7;
    start = localMidnight(year, month, day - sinceMonday, zone);
    end = localMidnight(year, month, day - sinceMonday + 7, zone);
  } else {
    start = localMidnight(year, month, 1, zone);
    end = localMidnight(year, month + 1, 1, zone);
  }
  return { start: Math.floor(start / 1000), end: Math.floor(end / 1000) };
}

/** The spend of the period containing `now`: the stored spend when it belongs to that period, else nothing. */
export function budgetUsageAt(
  row: { budget_period: BudgetPeriod; period_spent: number; period_start: number },
  now: number,
  zone: string,
): BudgetUsage | undefined {
  if (!row.budget_period) return undefined;
  const { start, end } = budgetPeriodAt(row.budget_period, now, zone);
  return { spent: Number(row.period_start) === start ? Number(row.period_spent) : 0, period_start: start, resets_at: end };
}

/** The local time of `seconds` in `zone`, as `2026-11-28 00:00 (Asia/Shanghai)`. */
export function localTimeText(seconds: number, zone: string): string {
  const wall = wallClock(seconds * 1000, zone);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${wall.year}-${two(wall.month + 1)}-${two(wall.day)} ${two(wall.hour)}:${two(wall.minute)} (${zone})`;
}

/**
 * Reads a budget from a form or API body: `budget_period` one of '', day,
 * week, month; `budget_quota` a whole number of quota units, above 0 when a
 * period is set. With no period the amount is stored as 0.
 */
export function parseBudget(period: unknown, quota: unknown): { value: BudgetFields } | { error: string } {
  const budgetPeriod = period ?? '';
  if (!isBudgetPeriod(budgetPeriod)) return { error: 'budget_period must be one of "", "day", "week" or "month"' };
  if (budgetPeriod === '') return { value: { budget_period: '', budget_quota: 0 } };
  const amount = typeof quota === 'string' && /^\d+$/.test(quota.trim()) ? Number(quota.trim()) : quota;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
    return { error: 'budget_quota must be a whole number of quota above 0 when a budget period is set' };
  return { value: { budget_period: budgetPeriod, budget_quota: amount } };
}
