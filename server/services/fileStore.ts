// Where the bytes of /v1/files live, behind three calls, so a store other than
// the database (S3: s3FileStore.ts) can take its place: put a stream, get a
// stream, delete.
// The database store keeps a file as rows of FILE_CHUNK_BYTES in `file_chunks`,
// written as they fill and read back a few at a time: a file is never whole in
// memory, and every node reads what any node stored.
// Housekeeping: a periodic sweep (on one node at a time) removes files past
// their expires_at and uploads their node never finished; a deleted user's
// files go with them. Either way the file's row is removed first, by a
// conditional DELETE, and only the caller that removed it frees the bytes.
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import {
  deadFileIds,
  deleteFileChunks,
  fileIdsOf,
  findFile,
  insertFileChunk,
  readFileChunks,
  takeFileRow,
  type FileRow,
} from '../repositories/files';
import type { JobRunner } from './jobRunner';

/** 256 KiB: well under MariaDB's default max_allowed_packet (16 MiB). */
export const FILE_CHUNK_BYTES = 256 * 1024;

/** Chunks read per query when a file is streamed out (1 MiB). */
const CHUNKS_PER_READ = 4;

export interface FileStore {
  /**
   * Stores the bytes `source` yields under `fileId`, pulling as it writes; resolves with their count. A source that
   * throws (a limit crossed, a client gone) rejects it, and what was written stays until `delete`.
   */
  put(fileId: string, source: AsyncIterable<Buffer>, onStored?: (bytes: number) => Promise<void>): Promise<number>;
  /** The stored bytes, read as the stream is consumed. */
  get(fileId: string): Readable;
  delete(fileId: string): Promise<void>;
  /** Lets go of what the store holds open (an S3 client's connections); the app's close calls it. */
  close?(): Promise<void>;
}

/** Cuts a stream of buffers of any size into pieces of exactly `size` bytes (the last one shorter). */
export async function* rechunk(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of source) {
    pending.push(piece);
    pendingBytes += piece.length;
    if (pendingBytes < size) continue;
    const whole = Buffer.concat(pending, pendingBytes);
    let offset = 0;
    for (; whole.length - offset >= size; offset += size) yield whole.subarray(offset, offset + size);
    pending = [whole.subarray(offset)];
    pendingBytes = whole.length - offset;
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}

export function databaseFileStore(db: Kysely<Database>): FileStore {
  return {
    async put(fileId, source, onStored) {
      let seq = 0;
      let bytes = 0;
      for await (const chunk of rechunk(source, FILE_CHUNK_BYTES)) {
        await insertFileChunk(db, fileId, seq++, chunk);
        bytes += chunk.length;
        await onStored?.(bytes);
      }
      return bytes;
    },
    get(fileId) {
      async function* chunks(): AsyncGenerator<Buffer> {
        let next = 0;
        for (;;) {
          const rows = await readFileChunks(db, fileId, next, CHUNKS_PER_READ);
          for (const row of rows) yield row.data;
          if (rows.length < CHUNKS_PER_READ) return;
          next = rows[rows.length - 1].seq + 1;
        }
      }
      return Readable.from(chunks(), { objectMode: false });
    },
    delete: (fileId) => deleteFileChunks(db, fileId),
  };
}

/**
 * The user's file `id` and its bytes as a stream, or undefined when the user has no such file (another user's
 * id included): how the batch runner reads an input file.
 */
export async function openOwnedFile(
  db: Kysely<Database>,
  store: FileStore,
  userId: number,
  id: string,
): Promise<{ file: FileRow; content: Readable } | undefined> {
  const file = await findFile(db, userId, id);
  return file && { file, content: store.get(id) };
}

/** An upload still `uploading` after this long was cut off (its node died): its bytes are freed. */
export const STALE_UPLOAD_SECONDS = 24 * 3600;

/** How often the sweep of dead files runs, across the deployment; and how many files one run removes at most. */
const SWEEP_EVERY_MS = 10 * 60_000;
const SWEEP_LIMIT = 1000;

/**
 * Removes every file that is dead at `now` (Unix seconds): expired, or an upload unfinished for
 * STALE_UPLOAD_SECONDS. How many files this call removed; one another node removed first is not counted.
 */
export async function sweepDeadFiles(db: Kysely<Database>, store: FileStore, now = Math.floor(Date.now() / 1000)): Promise<number> {
  const dead = { now, staleBefore: now - STALE_UPLOAD_SECONDS };
  let removed = 0;
  for (const id of await deadFileIds(db, { ...dead, limit: SWEEP_LIMIT })) {
    if (!(await takeFileRow(db, id, dead))) continue;
    await store.delete(id);
    removed += 1;
  }
  return removed;
}

/** Removes all of a user's files, rows and bytes (their account is deleted): how many. */
export async function deleteFilesOf(db: Kysely<Database>, store: FileStore, userId: number): Promise<number> {
  let removed = 0;
  for (const id of await fileIdsOf(db, userId)) {
    if (!(await takeFileRow(db, id))) continue;
    await store.delete(id);
    removed += 1;
  }
  return removed;
}

/** The periodic sweep: on one worker of one node per period (the job's lease), first run a minute after start. */
export function fileSweepSchedule(deps: {
  db: Kysely<Database>;
  store: FileStore;
  jobs: Pick<JobRunner, 'runPeriodic'>;
  log: { error(object: object, message: string): void };
}): { start(): void; stop(): Promise<void> } {
  let first: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = deps.jobs
      .runPeriodic('file-sweep', SWEEP_EVERY_MS, () => sweepDeadFiles(deps.db, deps.store))
      .catch((error: unknown) => deps.log.error({ err: error }, 'the sweep of expired files failed'));
  };
  return {
    start() {
      first = setTimeout(() => {
        run();
        timer = setInterval(run, SWEEP_EVERY_MS);
        timer.unref(); // never keeps the process alive on its own
      }, 60_000);
      first.unref();
    },
    /** Stops the timers, once the run under way (if any) has ended. */
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
