// A path to the log list with its filters set (react-admin reads them from the
// URL's `filter`), for figures elsewhere that the log's rows explain.
import type { LogFilter } from '../../../common/records';

export function logListPath(filter: LogFilter): string {
  const set = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined && value !== null && value !== ''));
  return `/log?${new URLSearchParams({ filter: JSON.stringify(set) })}`;
}
