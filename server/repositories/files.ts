// The files of /v1/files (migration 0028): their metadata rows, and their
// bytes as numbered chunk rows. A file is its owner's alone: every read names
// the owner, so another user's id finds nothing. Expired files are treated as
// gone, and removed by the next upload of their owner or the periodic sweep
// (services/fileStore.ts), whichever comes first.
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Database } from '../db/database';
import type { FilesTable } from '../db/schema/files';

type Db = Kysely<Database>;

export type FileRow = Selectable<FilesTable>;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** PostgreSQL hands bigint back as numbers (database.ts), MySQL some as strings: every number column as a number. */
function normalised(row: FileRow): FileRow {
  return {
    ...row,
    seq: Number(row.seq),
    user_id: Number(row.user_id),
    bytes: Number(row.bytes),
    created_at: Number(row.created_at),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
  };
}

export interface NewFile {
  id: string;
  userId: number;
  filename: string;
  purpose: string;
  createdAt: number;
}

/** A row for an upload about to stream in: `uploading`, 0 bytes. */
export async function insertUploadingFile(db: Db, file: NewFile): Promise<void> {
  await db
    .insertInto('files')
    .values({
      id: file.id,
      user_id: file.userId,
      filename: file.filename,
      purpose: file.purpose,
      bytes: 0,
      status: 'uploading',
      created_at: file.createdAt,
      expires_at: null,
    })
    .execute();
}

/** Records how many bytes an upload holds so far (counted by the quota while it streams). */
export async function setFileBytes(db: Db, id: string, bytes: number): Promise<void> {
  await db.updateTable('files').set({ bytes }).where('id', '=', id).execute();
}

/** The upload is whole: its purpose and expiry (known only once the form is read) and its size are final. */
export async function markFileProcessed(
  db: Db,
  id: string,
  file: { purpose: string; bytes: number; expiresAt: number | null },
): Promise<void> {
  await db
    .updateTable('files')
    .set({ status: 'processed', purpose: file.purpose, bytes: file.bytes, expires_at: file.expiresAt })
    .where('id', '=', id)
    .execute();
}

/** Bytes the user stores: every file not expired, uploads in progress included. */
export async function storedBytesOf(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('files')
    .select((eb) => eb.fn.sum<number | string | null>('bytes').as('total'))
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds())]))
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** The user's processed, unexpired file `id`, or undefined (someone else's file is undefined too). */
export async function findFile(db: Db, userId: number, id: string): Promise<FileRow | undefined> {
  const row = await db
    .selectFrom('files')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('status', '=', 'processed')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds())]))
    .executeTakeFirst();
  return row && normalised(row);
}

export interface FileListQuery {
  userId: number;
  purpose?: string;
  /** The cursor: files after this one in `order`. */
  after?: FileRow;
  order: 'asc' | 'desc';
  limit: number;
}

/** A page of the user's processed, unexpired files, newest first unless `asc`. */
export async function listFiles(db: Db, query: FileListQuery): Promise<FileRow[]> {
  let select = db
    .selectFrom('files')
    .selectAll()
    .where('user_id', '=', query.userId)
    .where('status', '=', 'processed')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds())]));
  if (query.purpose !== undefined) select = select.where('purpose', '=', query.purpose);
  if (query.after) select = select.where('seq', query.order === 'asc' ? '>' : '<', query.after.seq);
  const rows = await select.orderBy('seq', query.order).limit(query.limit).execute();
  return rows.map(normalised);
}

/** Removes a file's row and its chunks; false when the user has no such file. */
export async function deleteFileRow(db: Db, userId: number, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('files').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/**
 * Files gone at `now`: expired, an upload still unfinished since before `staleBefore` (its node died), or a file
 * whose owner is deleted (the deletion's own removal of its files cut short).
 */
const deadAt = (now: number, staleBefore: number) => (eb: ExpressionBuilder<Database, 'files'>) =>
  eb.or([
    eb('expires_at', '<=', now),
    eb.and([eb('status', '=', 'uploading'), eb('created_at', '<', staleBefore)]),
    eb.not(eb.exists(eb.selectFrom('users').select('users.id').whereRef('users.id', '=', 'files.user_id'))),
  ]);

/** Ids of dead files (deadAt), oldest first: one user's, or (the periodic sweep) anyone's. */
export async function deadFileIds(db: Db, dead: { now: number; staleBefore: number; userId?: number; limit: number }): Promise<string[]> {
  let select = db.selectFrom('files').select('id').where(deadAt(dead.now, dead.staleBefore));
  if (dead.userId !== undefined) select = select.where('user_id', '=', dead.userId);
  const rows = await select.orderBy('seq', 'asc').limit(dead.limit).execute();
  return rows.map((row) => row.id);
}

/**
 * Removes the row of file `id` (only while it is still dead at `dead`, when given): whether this call removed it.
 * Whoever removes a row frees its bytes, so two nodes sweeping at once never free one file twice.
 */
export async function takeFileRow(db: Db, id: string, dead?: { now: number; staleBefore: number }): Promise<boolean> {
  let removal = db.deleteFrom('files').where('id', '=', id);
  if (dead) removal = removal.where(deadAt(dead.now, dead.staleBefore));
  const removed = await removal.executeTakeFirst();
  return Number(removed.numDeletedRows) > 0;
}

/** The user's expired files and uploads that never finished (older than `staleBefore`): the ids of those this call removed. */
export async function takeDeadFiles(db: Db, userId: number, staleBefore: number): Promise<string[]> {
  const dead = { now: nowSeconds(), staleBefore };
  const taken: string[] = [];
  for (const id of await deadFileIds(db, { ...dead, userId, limit: 1000 })) if (await takeFileRow(db, id, dead)) taken.push(id);
  return taken;
}

/** Ids of every file of a user's, whatever its state (their account is being deleted). */
export async function fileIdsOf(db: Db, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('files').select('id').where('user_id', '=', userId).execute();
  return rows.map((row) => row.id);
}

// The chunks: what the database file store (server/services/fileStore.ts) reads and writes.

export async function insertFileChunk(db: Db, fileId: string, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('file_chunks').values({ file_id: fileId, seq, data }).execute();
}

/** Up to `count` chunks of a file from `fromSeq` on, in order. */
export async function readFileChunks(db: Db, fileId: string, fromSeq: number, count: number): Promise<{ seq: number; data: Buffer }[]> {
  const rows = await db
    .selectFrom('file_chunks')
    .select(['seq', 'data'])
    .where('file_id', '=', fileId)
    .where('seq', '>=', fromSeq)
    .orderBy('seq', 'asc')
    .limit(count)
    .execute();
  return rows.map((row) => ({ seq: Number(row.seq), data: Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data) }));
}

export async function deleteFileChunks(db: Db, fileId: string): Promise<void> {
  await db.deleteFrom('file_chunks').where('file_id', '=', fileId).execute();
}
