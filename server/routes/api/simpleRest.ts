// The wire convention of the console resources one-api never had (webhooks,
// their deliveries, and later admin resources): ra-data-simple-rest's.
//   GET    /api/{resource}?sort=["field","ASC"]&range=[0,24]&filter={...}
//          → a JSON array, with `Content-Range: {resource} 0-24/319`
//   GET    /api/{resource}/{id}   → the record
//   POST   /api/{resource}        → 201 and the record
//   PUT    /api/{resource}/{id}   → the record
//   DELETE /api/{resource}/{id}   → the deleted record
// Refusals keep the envelope ({success: false, message, code}) with a real
// HTTP status (400, 403, 404), which is what a REST client reads.
import type { FastifyReply } from 'fastify';
import { fail } from '../../../common/envelope';
import type { MessageCode } from '../../../common/messageCodes';
import { requireRole } from '../../plugins/auth';

/** Longest page a list answers (range beyond it is cut). */
export const REST_RANGE_MAX = 500;

export interface RestListQuery {
  sort: { field: string; order: 'asc' | 'desc' };
  offset: number;
  limit: number;
  filter: Record<string, unknown>;
}

function parseJson(raw: unknown): unknown {
  if (typeof raw !== 'string' || raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

type ListRules = { sortable: readonly string[]; filters: readonly string[]; defaultSort: RestListQuery['sort'] };

/** The list's order: `["field","ASC"|"DESC"]` on a sortable column, else the resource's default. */
function parseRestSort(rawSort: unknown, rules: ListRules): RestListQuery['sort'] | { error: string } {
  const parsedSort = parseJson(rawSort);
  if (parsedSort === undefined) return rules.defaultSort;
  const [field, order] = Array.isArray(parsedSort) ? (parsedSort as unknown[]) : [];
  if (
    !Array.isArray(parsedSort) ||
    parsedSort.length !== 2 ||
    typeof field !== 'string' ||
    !rules.sortable.includes(field) ||
    !['ASC', 'DESC'].includes(String(order).toUpperCase())
  ) {
    return { error: `sort must be ["field","ASC"|"DESC"] with field one of ${rules.sortable.join(', ')}` };
  }
  return { field, order: String(order).toUpperCase() === 'ASC' ? 'asc' : 'desc' };
}

/** The list's page: `[start, end]`, both inclusive, at most REST_RANGE_MAX long; the first 25 by default. */
function parseRestRange(rawRange: unknown): { offset: number; limit: number } | { error: string } {
  const parsedRange = parseJson(rawRange);
  if (parsedRange === undefined) return { offset: 0, limit: 25 };
  const [start, end] = Array.isArray(parsedRange) ? (parsedRange as unknown[]) : [];
  if (
    typeof start !== 'number' ||
    typeof end !== 'number' ||
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(end) ||
    start < 0 ||
    end < start
  )
    return { error: 'range must be [start, end] with 0 <= start <= end' };
  return { offset: start, limit: Math.min(end - start + 1, REST_RANGE_MAX) };
}

/** The list's filter: a JSON object of known filters; empty values are dropped. */
function parseRestFilter(rawFilter: unknown, filters: readonly string[]): { filter: Record<string, unknown> } | { error: string } {
  const parsedFilter = parseJson(rawFilter) ?? {};
  if (typeof parsedFilter !== 'object' || Array.isArray(parsedFilter)) return { error: 'filter must be a JSON object' };
  const filter: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsedFilter as Record<string, unknown>)) {
    if (!filters.includes(key)) return { error: `unknown filter ${key}; known: ${filters.join(', ')}` };
    if (value !== undefined && value !== null && value !== '') filter[key] = value;
  }
  return { filter };
}

/** The list query's sort, range and filter, checked against the resource's sortable columns and filters. */
export function parseRestList(query: unknown, rules: ListRules): RestListQuery | { error: string } {
  const { sort: rawSort, range: rawRange, filter: rawFilter } = (query ?? {}) as Record<string, unknown>;
  const sort = parseRestSort(rawSort, rules);
  if ('error' in sort) return sort;
  const range = parseRestRange(rawRange);
  if ('error' in range) return range;
  const filtered = parseRestFilter(rawFilter, rules.filters);
  if ('error' in filtered) return filtered;
  return { sort, offset: range.offset, limit: range.limit, filter: filtered.filter };
}

/** Ids from a getMany filter ({ id: [1, 2] }) or a single id. */
export function idsOfFilter(value: unknown): number[] | undefined {
  if (value === undefined) return undefined;
  const ids = (Array.isArray(value) ? value : [value]).map(Number).filter((id) => Number.isSafeInteger(id) && id > 0);
  return ids;
}

/** A page of a list with its Content-Range (exposed, so a cross-origin console can read it too). */
export function sendRestList<T>(reply: FastifyReply, resource: string, rows: T[], offset: number, total: number): T[] {
  const range = rows.length ? `${offset}-${offset + rows.length - 1}` : '*';
  reply.header('Content-Range', `${resource} ${range}/${total}`).header('Access-Control-Expose-Headers', 'Content-Range');
  return rows;
}

export function restRefusal(reply: FastifyReply, status: 400 | 404 | 409, message: string, code?: MessageCode) {
  return reply.code(status).send(fail(message, code ?? (status === 404 ? 'not_found' : undefined)));
}

/** The role check of a simple-rest route: 401 for nobody, 403 for a known caller below `minimumRole`. */
export const restRole = (minimumRole: number) => requireRole(minimumRole, { refusalStatus: 403 });
