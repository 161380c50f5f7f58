import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { DEFAULT_SORT, SORTABLE_COLUMNS, type ListResource, type SortOrder } from '../../common/listQuery';
import { ITEMS_PER_PAGE } from '../../common/version';

/** The last page whose offset is still a safe integer (the routes' schemas refuse larger ones first). */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / ITEMS_PER_PAGE);

/** `?p=` as a 0-based page: garbage is 0, negatives are clamped, and so is a page past MAX_PAGE. */
export function pageOf(query: unknown): number {
  const raw = (query as { p?: string } | undefined)?.p; // the schemas' `page`: digits
  const page = Number.parseInt(String(raw ?? '0'), 10);
  return Number.isFinite(page) && page > 0 ? Math.min(page, MAX_PAGE) : 0;
}

export const pageOffset = (page: number) => page * ITEMS_PER_PAGE;
export { ITEMS_PER_PAGE };

/** One page of a list: how many rows and where they start. */
export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * `?p=` and `page_size=` as a window. The route schemas admit only the sizes of
 * PAGE_SIZES; absent, the size is one-api's 10.
 */
export function pageWindowOf(query: unknown): PageWindow {
  const size = Number((query as { page_size?: unknown } | undefined)?.page_size ?? ITEMS_PER_PAGE) || ITEMS_PER_PAGE;
  const page = Math.min(pageOf(query), Math.floor(Number.MAX_SAFE_INTEGER / size));
  return { limit: size, offset: page * size };
}

/** The sort a request asks for (`sort`, `order`); the schemas have already refused columns off the whitelist. */
export interface ListSort {
  field: string;
  order: SortOrder;
}

export function sortOf(resource: ListResource, query: unknown): ListSort {
  const { sort, order } = (query ?? {}) as { sort?: string; order?: string };
  const columns: readonly string[] = SORTABLE_COLUMNS[resource];
  const field = sort && columns.includes(sort) ? sort : DEFAULT_SORT.field;
  return { field, order: order === 'asc' || order === 'desc' ? order : DEFAULT_SORT.order };
}

/**
 * ORDER BY the requested column, then by id (newest first) so equal values
 * keep one order from page to page. The default is exactly one-api's `id DESC`.
 */
export function orderedBy<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, sort: ListSort): SelectQueryBuilder<DB, TB, O> {
  const ordered = query.orderBy(sql.ref(sort.field), sort.order);
  return sort.field === 'id' ? ordered : ordered.orderBy(sql.ref('id'), 'desc');
}

/** Upper bound for searches, which are not paginated. */
export const SEARCH_LIMIT = 100;

/**
 * `column LIKE 'keyword%'` with the user's own % and _ taken literally. The
 * escape character is `!` because a backslash means different things in
 * SQLite, PostgreSQL and MySQL string literals.
 */
export function startsWith(column: string, keyword: string): RawBuilder<boolean> {
  return likeText(column, '', keyword, '%');
}

/**
 * The keyword as a whole secret key (a token key with or without `sk-`, a
 * redemption code), when it looks like one: the console puts a key it could
 * not copy into the search box, and the list then shows that key's row.
 */
export function wholeKeyOf(keyword: string): string | undefined {
  const key = keyword.startsWith('sk-') ? keyword.slice(3) : keyword;
  return /^[A-Za-z0-9]{24,64}$/.test(key) ? key : undefined;
}

/** `column LIKE before || keyword || after`, the keyword taken literally (as in startsWith). */
export function likeText(column: string, before: '' | '%' | '%,', keyword: string, after: '' | '%' | ',%'): RawBuilder<boolean> {
  const pattern = `${before}${keyword.replace(/[!%_]/g, (character) => `!${character}`)}${after}`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '!'`;
}

/** A positive whole-number id from a route parameter or a body field. */
export function positiveId(raw: unknown): number | undefined {
  const id = Number(raw);
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** The keyword as an id, when it is one. */
export function idOf(keyword: string): number | undefined {
  return /^\d{1,15}$/.test(keyword) ? Number(keyword) : undefined;
}
