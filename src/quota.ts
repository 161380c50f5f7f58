// Quota display per spec §9: a dollar amount when display_in_currency is on
// (quota / quota_per_unit, 2 decimals), otherwise a compact count.
import type { ClientStatus } from '../common/options';

export function formatCount(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(1)}B`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

export function formatQuota(quota: number, status: Pick<ClientStatus, 'display_in_currency' | 'quota_per_unit'> | null, digits = 2): string {
  const inCurrency = status ? status.display_in_currency : localStorage.getItem('display_in_currency') !== 'false';
  const perUnit = status?.quota_per_unit || Number(localStorage.getItem('quota_per_unit')) || 500000;
  if (inCurrency) return `$${(quota / perUnit).toFixed(digits)}`;
  return formatCount(quota);
}
