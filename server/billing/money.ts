// Quota in the text a client or a user reads (a budget refusal): in dollars
// (quota / QuotaPerUnit) when DisplayInCurrencyEnabled is on, as the console
// shows it, else as a count of quota. Log rows are not written through this:
// they keep "N quota", which the console converts (src/quota.ts), so a row
// reads right whatever the option says when it is read.
import type { OptionKey } from '../../common/options';

/** What the unit is read from: the options (or any reader of them). */
export interface MoneyOptions {
  number(key: OptionKey): number;
  bool(key: OptionKey): boolean;
}

/** The unit money is said in: dollars, or quota. */
export interface MoneyUnit {
  inCurrency: boolean;
  perUnit: number;
}

const DEFAULT_QUOTA_PER_UNIT = 500_000;
/** The most decimals a tiny amount is said with (one quota at 500000 per dollar is $0.000002). */
const MAX_DIGITS = 10;

export function moneyUnit(options: MoneyOptions): MoneyUnit {
  const perUnit = options.number('QuotaPerUnit');
  return {
    inCurrency: options.bool('DisplayInCurrencyEnabled'),
    perUnit: Number.isFinite(perUnit) && perUnit > 0 ? perUnit : DEFAULT_QUOTA_PER_UNIT,
  };
}

/**
 * Dollars with 2 decimals; an amount that is not nothing never reads as
 * nothing ($0.0002 rather than $0.00: two significant digits, no trailing zero
 * past the cents).
 */
export function dollarText(dollars: number): string {
  const abs = Math.abs(dollars);
  if (dollars === 0 || abs >= 0.005) return `$${dollars.toFixed(2)}`;
  const digits = Math.min(MAX_DIGITS, Math.ceil(-Math.log10(abs)) + 1);
  return `$${dollars.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** The number alone: "$0.0002" in dollars, "100" in quota (the caller says "quota" once after a pair). */
export function bareAmount(quota: number, unit: MoneyUnit): string {
  return unit.inCurrency ? dollarText(quota / unit.perUnit) : String(quota);
}

/** The amount with its unit: "$0.0002", or "100 quota". */
export function amountText(quota: number, unit: MoneyUnit): string {
  return unit.inCurrency ? bareAmount(quota, unit) : `${quota} quota`;
}
