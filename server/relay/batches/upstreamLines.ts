// The files of a batch at the vendor, a line at a time: the input file's
// multipart upload written as its lines come (never the whole file in
// memory), and the output and error files read back line by line into
// results with their usage. Line shapes: OpenAI's request input object
// ({custom_id, method, url, body}) and request output object ({id, custom_id,
// response: {status_code, request_id, body}, error}).
// Reference: https://platform.openai.com/docs/api-reference/batch/request-output
import { randomBytes } from 'node:crypto';
import type { UpstreamBatchLine, UpstreamBatchResult, UpstreamBatchUsage } from './upstream';
import type { BatchVendor } from './upstreamHttp';

/** Lines are sent in pieces of about this many bytes, not one write each. */
const PIECE_BYTES = 64 * 1024;

export interface UploadBody {
  contentType: string;
  /** The body, made once for the call; `progress` is called on every line read from the source. */
  body: (progress: () => void) => ReadableStream<Uint8Array>;
  /** What the lines' source threw, if it did (the upload then fails, and this is the reason to report). */
  sourceError(): unknown;
}

/** One input line as the vendor reads it: its endpoint's name and the model it knows. */
function inputLine(line: UpstreamBatchLine, vendor: BatchVendor): string {
  const body = typeof line.body.model === 'string' ? { ...line.body, model: vendor.model(line.body.model) } : line.body;
  return `${JSON.stringify({ custom_id: line.customId, method: 'POST', url: vendor.endpoint(line.url), body })}\n`;
}

/** The multipart/form-data body of POST /files with purpose `batch`, the JSONL written as the lines come. */
export function uploadBody(lines: AsyncIterable<UpstreamBatchLine> | Iterable<UpstreamBatchLine>, vendor: BatchVendor): UploadBody {
  const boundary = `switchboard-${randomBytes(12).toString('hex')}`;
  const encoder = new TextEncoder();
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="batch.jsonl"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const tail = `\r\n--${boundary}--\r\n`;
  const iterator = Symbol.asyncIterator in lines ? lines[Symbol.asyncIterator]() : lines[Symbol.iterator]();
  let failure: unknown;
  let started = false;
  let done = false;
  const body = (progress: () => void) =>
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (done) return;
        let piece = started ? '' : head;
        started = true;
        try {
          while (piece.length < PIECE_BYTES) {
            const next = await iterator.next();
            if (next.done) {
              done = true;
              piece += tail;
              break;
            }
            piece += inputLine(next.value, vendor);
            progress();
          }
        } catch (error) {
          failure = error;
          controller.error(error);
          return;
        }
        controller.enqueue(encoder.encode(piece));
        if (done) controller.close();
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  return { contentType: `multipart/form-data; boundary=${boundary}`, body, sourceError: () => failure };
}

/** The lines of a JSONL stream, without their line ends; `progress` is called on each piece received. */
export async function* jsonlLines(stream: ReadableStream<Uint8Array>, progress: () => void): AsyncGenerator<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      progress();
      rest += value;
      let end = rest.indexOf('\n');
      while (end >= 0) {
        const line = rest.slice(0, end).trim();
        if (line) yield line;
        rest = rest.slice(end + 1);
        end = rest.indexOf('\n');
      }
    }
    if (rest.trim()) yield rest.trim();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
const record = (value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The usage an answer's body reports: chat and completions, embeddings, or Responses' names for it. */
export function usageOf(body: unknown): UpstreamBatchUsage | undefined {
  const usage = record(record(body)?.usage);
  if (!usage) return undefined;
  if (usage.input_tokens !== undefined || usage.output_tokens !== undefined) {
    const cached = record(usage.input_tokens_details)?.cached_tokens;
    return {
      prompt_tokens: count(usage.input_tokens),
      completion_tokens: count(usage.output_tokens),
      ...(cached !== undefined ? { cached_tokens: count(cached) } : {}),
    };
  }
  const cached = record(usage.prompt_tokens_details)?.cached_tokens;
  return {
    prompt_tokens: count(usage.prompt_tokens),
    completion_tokens: count(usage.completion_tokens),
    ...(cached !== undefined ? { cached_tokens: count(cached) } : {}),
  };
}

/** An answer's body: some vendors write it as a JSON string inside the line. */
function bodyOf(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** The error of a line: its own (a failure that is no HTTP answer), else the error object of a non-2xx body. */
function errorOf(line: Record<string, unknown>, statusCode: number, body: unknown): UpstreamBatchResult['error'] {
  const own = record(line.error);
  const error = own ?? (statusCode >= 200 && statusCode < 300 ? undefined : record(record(body)?.error));
  if (!error) return statusCode >= 200 && statusCode < 300 ? undefined : { code: 'upstream_error', message: `HTTP ${statusCode}` };
  const code = [error.code, error.type].find((value) => typeof value === 'string' || typeof value === 'number');
  return {
    code: code === undefined ? 'upstream_error' : String(code),
    message: typeof error.message === 'string' ? error.message : '',
  };
}

/** One line of an output or error file as a result; undefined for a line that is not such an object. */
export function resultOfLine(text: string): UpstreamBatchResult | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const line = record(parsed);
  if (!line || typeof line.custom_id !== 'string') return undefined;
  const response = record(line.response);
  const statusCode = typeof response?.status_code === 'number' ? response.status_code : 0;
  const body = bodyOf(response?.body);
  const usage = statusCode >= 200 && statusCode < 300 ? usageOf(body) : undefined;
  const error = errorOf(line, statusCode, body);
  return { customId: line.custom_id, statusCode, body, ...(usage ? { usage } : {}), ...(error ? { error } : {}) };
}
