// A finished video's bytes as the client gets them, Range and all: a vendor's
// download streamed through with its own headers, or the copy the gateway
// keeps in the file store (/v1/files' store: every node reads it) for a vendor
// that handed the bytes over once (Vertex AI's Veo), cut to the asked range here.
import { Readable } from 'node:stream';
import type { FileStore } from '../../services/fileStore';

export type VideoContent =
  { ok: true; status: number; headers: Record<string, string>; body: Readable } | { ok: false; status: 416 | 502; message: string };

/** The headers of the vendor's content answer handed on to the client. */
const CONTENT_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];

const NOT_SENT: VideoContent = { ok: false, status: 502, message: 'the vendor did not send the video' };
const NOT_IN_RANGE: VideoContent = { ok: false, status: 416, message: 'the range asked for is not in the video' };

/** The vendor's answer to a content GET, as the client gets it: streamed through, or why there is none. */
export function vendorContent(answer: Response | undefined): VideoContent {
  if (!answer?.body) return NOT_SENT;
  if (!answer.ok && answer.status !== 206) {
    void answer.body.cancel();
    return answer.status === 416 ? NOT_IN_RANGE : NOT_SENT;
  }
  const headers: Record<string, string> = {};
  for (const name of CONTENT_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { ok: true, status: answer.status, headers, body: Readable.fromWeb(answer.body) };
}

/** Where a kept video's bytes and its note (size, type) are in the store. */
const keptKeys = (taskId: string) => ({ bytes: `${taskId}.mp4`, note: `${taskId}.json` });

// eslint-disable-next-line @typescript-eslint/require-await -- the store pulls from an async source
async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** Keeps a video's bytes (anew: a poll retried after a failure writes them again); the note last, so it says they are whole. */
export async function keepVideo(store: FileStore, taskId: string, bytes: Buffer, mimeType: string): Promise<void> {
  const keys = keptKeys(taskId);
  await forgetVideo(store, taskId);
  await store.put(keys.bytes, once(bytes));
  await store.put(keys.note, once(Buffer.from(JSON.stringify({ bytes: bytes.length, mimeType }))));
}

/** Frees a kept video's bytes (none kept: nothing to do). */
export async function forgetVideo(store: FileStore, taskId: string): Promise<void> {
  const keys = keptKeys(taskId);
  await store.delete(keys.note);
  await store.delete(keys.bytes);
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size` bytes: the first and last byte, 'outside' when none is in it; undefined to send it all. */
export function rangeOf(range: string | undefined, size: number): { start: number; end: number } | 'outside' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(range?.trim() ?? '');
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 ? 'outside' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  return start > end || start >= size ? 'outside' : { start, end };
}

/** The bytes from `start` to `end` of a stream, read as far as needed. */
async function* slice(source: AsyncIterable<Buffer>, start: number, end: number): AsyncGenerator<Buffer> {
  let offset = 0;
  for await (const piece of source) {
    const from = Math.max(0, start - offset);
    const to = Math.min(piece.length, end + 1 - offset);
    if (to > from) yield piece.subarray(from, to);
    offset += piece.length;
    if (offset > end) return;
  }
}

/** A kept video, whole or the asked range of it; 502 when the store has none (a poll never kept it). */
export async function keptContent(store: FileStore, taskId: string, range: string | undefined): Promise<VideoContent> {
  const keys = keptKeys(taskId);
  let note: { bytes?: unknown; mimeType?: unknown } | undefined;
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of store.get(keys.note)) chunks.push(chunk as Buffer);
    note = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof note) : undefined;
  } catch {
    note = undefined;
  }
  if (typeof note?.bytes !== 'number') return { ok: false, status: 502, message: 'the gateway holds no copy of this video' };
  const size = note.bytes;
  const type = typeof note.mimeType === 'string' ? note.mimeType : 'video/mp4';
  const asked = rangeOf(range, size);
  if (asked === 'outside') return NOT_IN_RANGE;
  const headers: Record<string, string> = { 'content-type': type, 'accept-ranges': 'bytes' };
  if (!asked) return { ok: true, status: 200, headers: { ...headers, 'content-length': String(size) }, body: store.get(keys.bytes) };
  const { start, end } = asked;
  return {
    ok: true,
    status: 206,
    headers: { ...headers, 'content-length': String(end - start + 1), 'content-range': `bytes ${start}-${end}/${size}` },
    body: Readable.from(slice(store.get(keys.bytes), start, end), { objectMode: false }),
  };
}
