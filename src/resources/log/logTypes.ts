// The log types as the list and the drawer show them: a label key and a chip colour.
import { LogType } from '../../../common/roles';

export const LOG_TYPE = {
  [LogType.topup]: ['status.log.topup', 'success'],
  [LogType.consume]: ['status.log.consume', 'info'],
  [LogType.manage]: ['status.log.manage', 'warning'],
  [LogType.system]: ['status.log.system', 'secondary'],
  [LogType.error]: ['status.log.error', 'error'],
} as const;

// "all" (0) is the empty choice: no type filter
export const TYPE_CHOICES = Object.entries(LOG_TYPE).map(([id, [name]]) => ({ id: Number(id), name }));

// one request costs fractions of a cent: rows and their sum show six decimals
export const QUOTA_DIGITS = 6;
