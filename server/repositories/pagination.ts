import { sql, type RawBuilder } from 'kysely';
import { ITEMS_PER_PAGE } from '../../common/version';

/** The last page whose offset is still a safe integer (the routes' schemas refuse larger ones first). */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / ITEMS_PER_PAGE);

/** `?p=` as a 0-based page: garbage is 0, negatives are clamped, and so is a page past MAX_PAGE. */
export function pageOf(query: unknown): number {
  const raw = (query as { p?: unknown } | undefined)?.p;
  const page = Number.parseInt(String(raw ?? '0'), 10);
  return Number.isFinite(page) && page > 0 ? Math.min(page, MAX_PAGE) : 0;
}

export const pageOffset = (page: number) => page * ITEMS_PER_PAGE;
export { ITEMS_PER_PAGE };

/** Upper bound for searches, which are not paginated. */
export const SEARCH_LIMIT = 100;

/**
 * `column LIKE 'keyword%'` with the user's own % and _ taken literally. The
 * escape character is `!` because a backslash means different things in
 * SQLite, PostgreSQL and MySQL string literals.
 */
export function startsWith(column: string, keyword: string): RawBuilder<boolean> {
  const pattern = `${keyword.replace(/[!%_]/g, (character) => `!${character}`)}%`;
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
