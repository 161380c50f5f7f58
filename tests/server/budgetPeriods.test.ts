// Where a budget's period begins and ends (common/budgets.ts): local midnight
// in the operator's time zone, Monday for a week, the 1st for a month, across
// a change of summer time; and how a budget is read from a form.
import { describe, expect, it } from 'vitest';
import { budgetPeriodAt, budgetUsageAt, effectiveTimeZone, localTimeText, parseBudget } from '../../common/budgets';

const at = (iso: string) => Date.parse(iso);
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('budget periods', () => {
  it('start at local midnight: a day, a week from Monday, a month from the 1st (Shanghai, UTC+8)', () => {
    // Friday 27 November 2026, 10:00 in Shanghai
    const now = at('2026-11-27T02:00:00Z');
    expect(budgetPeriodAt('day', now, 'Asia/Shanghai')).toEqual({
      start: at('2026-11-26T16:00:00Z') / 1000,
      end: at('2026-11-27T16:00:00Z') / 1000,
    });
    const week = budgetPeriodAt('week', now, 'Asia/Shanghai');
    expect([iso(week.start), iso(week.end)]).toEqual(['2026-11-22T16:00:00.000Z', '2026-11-29T16:00:00.000Z']);
    const month = budgetPeriodAt('month', now, 'Asia/Shanghai');
    expect([iso(month.start), iso(month.end)]).toEqual(['2026-10-31T16:00:00.000Z', '2026-11-30T16:00:00.000Z']);
    // 23:30 UTC on the 30th is already 1 December there
    expect(iso(budgetPeriodAt('month', at('2026-11-30T16:30:00Z'), 'Asia/Shanghai').start)).toBe('2026-11-30T16:00:00.000Z');
  });

  it('follow summer time: a day of 23 hours, a week across the change, a December month into January', () => {
    // New York moves to summer time at 02:00 on Sunday 8 March 2026
    const day = budgetPeriodAt('day', at('2026-03-08T12:00:00Z'), 'America/New_York');
    expect([iso(day.start), iso(day.end)]).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    const week = budgetPeriodAt('week', at('2026-03-08T12:00:00Z'), 'America/New_York');
    expect([iso(week.start), iso(week.end)]).toEqual(['2026-03-02T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    const month = budgetPeriodAt('month', at('2026-12-15T12:00:00Z'), 'America/New_York');
    expect([iso(month.start), iso(month.end)]).toEqual(['2026-12-01T05:00:00.000Z', '2027-01-01T05:00:00.000Z']);
    // a Monday is its own week's first day
    expect(iso(budgetPeriodAt('week', at('2026-11-23T00:00:00Z'), 'UTC').start)).toBe('2026-11-23T00:00:00.000Z');
  });

  it("count a stored spend only in its own period, and say the reset in the zone's local time", () => {
    const now = at('2026-11-27T02:00:00Z');
    const { start, end } = budgetPeriodAt('day', now, 'Asia/Shanghai');
    expect(budgetUsageAt({ budget_period: 'day', period_spent: 70, period_start: start }, now, 'Asia/Shanghai')).toEqual({
      spent: 70,
      period_start: start,
      resets_at: end,
    });
    expect(budgetUsageAt({ budget_period: 'day', period_spent: 70, period_start: start - 86_400 }, now, 'Asia/Shanghai')?.spent).toBe(0);
    expect(budgetUsageAt({ budget_period: '', period_spent: 70, period_start: start }, now, 'Asia/Shanghai')).toBeUndefined();
    expect(localTimeText(end, 'Asia/Shanghai')).toBe('2026-11-28 00:00 (Asia/Shanghai)');
    expect(effectiveTimeZone('Mars/Olympus')).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(effectiveTimeZone(' Europe/Paris ')).toBe('Europe/Paris');
  });

  it('read from a form: a known period, and a whole amount above 0 with it', () => {
    expect(parseBudget('week', '1500')).toEqual({ value: { budget_period: 'week', budget_quota: 1500 } });
    expect(parseBudget(undefined, 99)).toEqual({ value: { budget_period: '', budget_quota: 0 } });
    expect(parseBudget('hour', 10)).toHaveProperty('error');
    expect(parseBudget('day', 1.5)).toHaveProperty('error');
    expect(parseBudget('day', undefined)).toHaveProperty('error');
  });
});
