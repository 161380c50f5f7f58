// How channel numbers read in the list (balances and quotas in the display unit).
import { findChannelType } from '../../../common/channelTypes';
import { formatCount } from '../../quota';
import type { PaletteName } from '../shared/palette';

/** Response time badge: 0 untested (grey); up to 1 s green, 3 s olive, 5 s yellow; slower red. */
export function responseTimeColor(milliseconds: number): PaletteName {
  if (!milliseconds) return 'grey';
  if (milliseconds <= 1000) return 'green';
  if (milliseconds <= 3000) return 'olive';
  if (milliseconds <= 5000) return 'yellow';
  return 'red';
}

/**
 * The balance in the unit the upstream reports for this type (the table's
 * `balance.unit`); null when the type has no balance query.
 */
export function formatBalance(type: number, balance: number): string | null {
  switch (findChannelType(type)?.balance?.unit) {
    case 'usd':
      return `$${balance.toFixed(2)}`;
    case 'cny':
      return `¥${balance.toFixed(2)}`;
    case 'cny_per_10000':
      return `¥${(balance / 10000).toFixed(2)}`;
    case 'points':
      return formatCount(balance);
    case undefined:
      return null;
  }
}
