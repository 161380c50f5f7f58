import type { Generated } from 'kysely';

/** A file uploaded through /v1/files (migration 0028). */
export interface FilesTable {
  /** Orders a user's files (the list's cursor). */
  seq: Generated<number>;
  /** The public id, "file-..." */
  id: string;
  user_id: number;
  filename: string;
  /** OpenAI's purpose: assistants, batch, fine-tune, vision, user_data, evals. */
  purpose: string;
  /** Bytes stored so far; the file's size once processed. */
  bytes: number;
  /** `uploading` while its chunks are written, then `processed`. */
  status: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds after which the file is gone; null = never. */
  expires_at: number | null;
}

/** One piece of a file's bytes, in order from 0. */
export interface FileChunksTable {
  file_id: string;
  seq: number;
  data: Buffer;
}

export interface FilesSchema {
  files: FilesTable;
  file_chunks: FileChunksTable;
}
