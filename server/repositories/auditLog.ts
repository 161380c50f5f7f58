// The audit log's queries (migration 0022): the chained append, the lists
// and searches, the chain walk's pages and retention's pruning. The hashing
// itself is server/audit/chain.ts; here the rows only move.
import { SqliteAdapter, type ExpressionBuilder, type Insertable, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { AuditFilter } from '../../common/audit';
import type { Database } from '../db/database';
import type { AuditChainTable, AuditLogTable } from '../db/schema/auditLog';
import { idOf, SEARCH_LIMIT, startsWith, type PageWindow } from './pagination';

export type AuditRow = Selectable<AuditLogTable>;
export type NewAuditRow = Insertable<AuditLogTable> & { seq: number; hash: string };
export type AuditChainRow = Selectable<AuditChainTable>;

type Executor = Kysely<Database>;
type AuditQuery = SelectQueryBuilder<Database, 'audit_log', AuditRow>;

/** The chain's one row: its head and the anchor retention left. */
export async function readAuditChain(db: Executor): Promise<AuditChainRow> {
  const row = await db.selectFrom('audit_chain').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  return {
    id: 1,
    head_seq: Number(row.head_seq),
    head_hash: row.head_hash,
    anchor_seq: Number(row.anchor_seq),
    anchor_hash: row.anchor_hash,
  };
}

/**
 * Appends one row after the chain's head, in one transaction: `link` makes the
 * row from the head it read; the head moves only if nobody moved it since (a
 * compare-and-set on head_seq), and then the row goes in. Resolves to false
 * when another writer (another node) got there first: the caller tries again
 * on the new head.
 */
export function appendLinkedRow(db: Executor, link: (head: { seq: number; hash: string }) => NewAuditRow): Promise<boolean> {
  // PostgreSQL and MySQL: the head is read locked, so a second writer waits for the first to commit and then
  // reads the new head (the compare-and-set then holds); SQLite has one writer and no FOR UPDATE
  const lockHead = !(db.getExecutor().adapter instanceof SqliteAdapter);
  return db.transaction().execute(async (transaction) => {
    const read = transaction.selectFrom('audit_chain').select(['head_seq', 'head_hash']).where('id', '=', 1);
    const head = await (lockHead ? read.forUpdate() : read).executeTakeFirstOrThrow();
    const headSeq = Number(head.head_seq);
    const row = link({ seq: headSeq, hash: head.head_hash });
    const moved = await transaction
      .updateTable('audit_chain')
      .set({ head_seq: row.seq, head_hash: row.hash })
      .where('id', '=', 1)
      .where('head_seq', '=', headSeq)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return false;
    await transaction.insertInto('audit_log').values(row).execute();
    return true;
  });
}

function filtered(query: AuditQuery, filter: AuditFilter): AuditQuery {
  let result = query;
  if (filter.user_id !== undefined) result = result.where('user_id', '=', filter.user_id);
  if (filter.username) result = result.where('username', '=', filter.username);
  if (filter.action) {
    const action = filter.action;
    result = result.where((eb) => eb.or([eb('action', '=', action), eb('route', '=', action)]));
  }
  if (filter.target_type) result = result.where('target_type', '=', filter.target_type);
  if (filter.target_id) result = result.where('target_id', '=', filter.target_id);
  if (filter.success === 'true' || filter.success === 'false') result = result.where('success', '=', filter.success === 'true' ? 1 : 0);
  if (filter.start_timestamp !== undefined) result = result.where('created_at', '>=', filter.start_timestamp);
  if (filter.end_timestamp !== undefined) result = result.where('created_at', '<=', filter.end_timestamp);
  if (filter.organization_id !== undefined) result = result.where('organization_id', '=', filter.organization_id);
  return result;
}

/** One page of rows within the filters, newest first. */
export function listAudit(db: Executor, filter: AuditFilter, window: PageWindow): Promise<AuditRow[]> {
  return filtered(db.selectFrom('audit_log').selectAll(), filter)
    .orderBy('seq', 'desc')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

/** The keyword as a username, action, route or IP prefix, or exactly a target id, request id or row id; newest first. */
export function searchAudit(db: Executor, keyword: string, filter: AuditFilter): Promise<AuditRow[]> {
  const matches = (eb: ExpressionBuilder<Database, 'audit_log'>) => {
    const id = idOf(keyword);
    return eb.or([
      startsWith('username', keyword),
      startsWith('action', keyword),
      startsWith('route', keyword),
      startsWith('ip', keyword),
      eb('target_type', '=', keyword),
      eb('target_id', '=', keyword),
      eb('request_id', '=', keyword),
      ...(id === undefined ? [] : [eb('id', '=', id)]),
    ]);
  };
  let query = filtered(db.selectFrom('audit_log').selectAll(), filter);
  if (keyword) query = query.where(matches);
  return query.orderBy('seq', 'desc').limit(SEARCH_LIMIT).execute();
}

/** Up to `limit` rows within the filters below `beforeSeq` (all when undefined), newest first: the CSV export's pages. */
export function auditRowsBefore(db: Executor, filter: AuditFilter, beforeSeq: number | undefined, limit: number): Promise<AuditRow[]> {
  let query = filtered(db.selectFrom('audit_log').selectAll(), filter);
  if (beforeSeq !== undefined) query = query.where('seq', '<', beforeSeq);
  return query.orderBy('seq', 'desc').limit(limit).execute();
}

/** Up to `limit` rows after `seq` up to `lastSeq`, in chain order: the walk's pages. */
export function auditRowsAfter(db: Executor, seq: number, lastSeq: number, limit: number): Promise<AuditRow[]> {
  return db.selectFrom('audit_log').selectAll().where('seq', '>', seq).where('seq', '<=', lastSeq).orderBy('seq').limit(limit).execute();
}

/** The seq of the last of the (at most `limit`) oldest rows created before `cutoff`; undefined when none is. */
export async function lastOldAuditSeq(db: Executor, cutoff: number, limit: number): Promise<number | undefined> {
  const rows = await db.selectFrom('audit_log').select('seq').where('created_at', '<', cutoff).orderBy('seq').limit(limit).execute();
  return rows.length ? Number(rows[rows.length - 1].seq) : undefined;
}

/**
 * Deletes the rows up to `seq` and makes the last of them the chain's anchor,
 * in one transaction, so a walk starts where the rows now start. Resolves to
 * how many rows went.
 */
export function pruneAuditThrough(db: Executor, seq: number): Promise<number> {
  return db.transaction().execute(async (transaction) => {
    const last = await transaction.selectFrom('audit_log').select(['seq', 'hash']).where('seq', '=', seq).executeTakeFirst();
    if (!last) return 0;
    const result = await transaction.deleteFrom('audit_log').where('seq', '<=', seq).executeTakeFirst();
    await transaction.updateTable('audit_chain').set({ anchor_seq: seq, anchor_hash: last.hash }).where('id', '=', 1).execute();
    return Number(result.numDeletedRows ?? 0);
  });
}
