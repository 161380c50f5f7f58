// How the dashboard writes numbers: money per the status (its display unit, as
// QuotaField does), counts with the language's separators, latencies, times.
import { useMemo } from 'react';
import { useLocale } from 'react-admin';
import type { DashboardGranularity } from '../../common/dashboard';
import { useStatus } from '../layout/status';
import { formatQuota } from '../quota';

export interface DashboardFormat {
  /** True when money is shown in dollars, false for raw quota counts. */
  inCurrency: boolean;
  /** Raw quota as the number a chart plots (dollars, or quota). */
  amount(quota: number): number;
  /** Raw quota as text ("$1.23", or a compact count). */
  money(quota: number): string;
  /** A plotted amount back as text (tooltips). */
  moneyOfAmount(amount: number): string;
  /** A plotted amount as an axis tick: compact ("$1.2K", "120万"). */
  moneyTick(amount: number): string;
  count(value: number): string;
  /** A count as an axis tick: compact, in the language's units ("1.2M", "120万"). */
  countTick(value: number): string;
  percent(ratio: number): string;
  /** A duration; '–' for null (none measured). */
  latency(milliseconds: number | null): string;
  /** A bucket's start as the axis shows it (days are UTC days, as the server buckets them). */
  bucket(seconds: number, granularity: DashboardGranularity): string;
  dateTime(seconds: number): string;
}

export function useDashboardFormat(): DashboardFormat {
  const { status } = useStatus();
  const locale = useLocale() === 'zh' ? 'zh-CN' : 'en-US';
  return useMemo(() => {
    const inCurrency = status ? status.display_in_currency : localStorage.getItem('display_in_currency') !== 'false';
    const perUnit = status?.quota_per_unit || Number(localStorage.getItem('quota_per_unit')) || 500000;
    const counts = new Intl.NumberFormat(locale);
    // three significant digits keep both a million ("1.25M") and a cent's fractions ("0.005") short
    const compact = new Intl.NumberFormat(locale, { notation: 'compact', maximumSignificantDigits: 3 });
    const percents = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 });
    const hours = new Intl.DateTimeFormat(locale, { month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hour12: false });
    const days = new Intl.DateTimeFormat(locale, { month: '2-digit', day: '2-digit', timeZone: 'UTC' });
    const dateTimes = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    });
    return {
      inCurrency,
      amount: (quota) => (inCurrency ? quota / perUnit : quota),
      money: (quota) => formatQuota(quota, status, quota !== 0 && Math.abs(quota / perUnit) < 0.01 ? 4 : 2),
      moneyOfAmount: (amount) =>
        inCurrency ? `$${amount.toFixed(amount !== 0 && Math.abs(amount) < 0.01 ? 4 : 2)}` : counts.format(amount),
      moneyTick: (amount) => (inCurrency ? `$${compact.format(amount)}` : compact.format(amount)),
      count: (value) => counts.format(value),
      countTick: (value) => compact.format(value),
      percent: (ratio) => percents.format(ratio),
      latency: (milliseconds) => {
        if (milliseconds === null) return '–';
        return milliseconds >= 1000
          ? `${(milliseconds / 1000).toFixed(milliseconds >= 10_000 ? 0 : 1)} s`
          : `${Math.round(milliseconds)} ms`;
      },
      bucket: (seconds, granularity) => (granularity === 'day' ? days : hours).format(new Date(seconds * 1000)),
      dateTime: (seconds) => dateTimes.format(new Date(seconds * 1000)),
    };
  }, [status, locale]);
}
