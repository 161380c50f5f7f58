// How channel numbers read in the list (spec §4 and §9).
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
 * The balance in the unit the upstream reports for this type; null when the
 * type has no balance query. 10 and 13 report points, shown as a count.
 */
export function formatBalance(type: number, balance: number): string | null {
  switch (type) {
    case 1:
    case 8:
      return `$${balance.toFixed(2)}`;
    case 4:
    case 12:
      return `¥${balance.toFixed(2)}`;
    case 5:
      return `¥${(balance / 10000).toFixed(2)}`;
    case 10:
    case 13:
      return formatCount(balance);
    default:
      return null;
  }
}
