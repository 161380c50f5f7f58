// Quota display: a dollar amount when display_in_currency is on
// (quota / quota_per_unit, 2 decimals), otherwise a compact count.
import type { ClientStatus } from '../common/options';

export function formatCount(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(1)}B`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

type UnitStatus = Pick<ClientStatus, 'display_in_currency' | 'quota_per_unit'> | null;

/** Whether quota is shown in dollars, and how much quota one dollar is (the status, else its cached copy). */
export function quotaUnit(status: UnitStatus): { inCurrency: boolean; perUnit: number } {
  return {
    inCurrency: status ? status.display_in_currency : localStorage.getItem('display_in_currency') !== 'false',
    perUnit: status?.quota_per_unit || Number(localStorage.getItem('quota_per_unit')) || 500000,
  };
}

/**
 * Quota as dollars, unrounded: a form shows exactly what is stored (the
 * shortest decimal that reads back as the same number).
 */
export function quotaToDollars(quota: number, perUnit: number): number {
  return quota / perUnit;
}

/** Dollars typed in a form as whole quota: $1.25 at 500000 per unit is 625000. Rounds away float noise (0.29 × 500000). */
export function dollarsToQuota(dollars: number, perUnit: number): number {
  return Math.round(dollars * perUnit);
}

/** The most decimals a tiny amount is shown with (a quota at 500000 per dollar is $0.000002). */
const MAX_DIGITS = 10;

export function formatQuota(quota: number, status: UnitStatus, digits = 2): string {
  const { inCurrency, perUnit } = quotaUnit(status);
  if (!inCurrency) return formatCount(quota);
  const dollars = quotaToDollars(quota, perUnit);
  // an amount that is not nothing never reads as nothing: $0.0012 rather than $0.00 (two significant digits)
  if (dollars !== 0 && Math.abs(dollars) < 0.5 * 10 ** -digits) {
    const needed = Math.min(MAX_DIGITS, Math.ceil(-Math.log10(Math.abs(dollars))) + 1);
    return `$${dollars.toFixed(Math.max(digits, needed))}`;
  }
  return `$${dollars.toFixed(digits)}`;
}

/**
 * An amount of a log's text in dollars: up to 6 decimals, at least 2 ($1.00,
 * $0.0002, -$0.50).
 */
export function dollarsInText(quota: number, perUnit: number): string {
  const dollars = quotaToDollars(Math.abs(quota), perUnit)
    .toFixed(6)
    .replace(/0{1,4}$/, '');
  return `${quota < 0 ? '-' : ''}$${dollars}`;
}

/**
 * "… 500000 quota …" in a log's text, in dollars when quota is shown in
 * dollars: "… $1.00 (500000 quota) …". Also one-api's "500000 点额度" (rows
 * imported from it, written while it showed quota).
 */
export function quotaInText(text: string, status: UnitStatus): string {
  const { inCurrency, perUnit } = quotaUnit(status);
  if (!inCurrency) return text;
  return text.replace(
    /(-?\d+) (quota\b|点额度)/g,
    (_, amount: string, unit: string) => `${dollarsInText(Number(amount), perUnit)} (${amount} ${unit})`,
  );
}
