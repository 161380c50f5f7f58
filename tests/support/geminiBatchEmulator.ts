// A loopback stand-in for Gemini's Batch API and the Files API pieces it uses,
// in front of the Gemini emulator (emulators/gemini.ts), which answers every
// other path and runs each request of a batch, so a line is answered (and its
// usage counted) exactly as a direct generateContent call is.
// Shapes, from Google's python-genai (batches.py, files.py, _api_client.py)
// and https://ai.google.dev/api/batch-mode:
// - POST /v1beta/models/{model}:batchGenerateContent {batch: {displayName,
//   inputConfig: {requests: {requests: [{request, metadata}]}} | {fileName}}}
//   answers an Operation {name: "batches/…", metadata: GenerateContentBatch}.
// - GET /v1beta/batches/{id}: the Operation, its metadata.state BATCH_STATE_*,
//   batchStats as int64 strings, and once done metadata.output with
//   inlinedResponses.inlinedResponses [{response | error, metadata}] (inline
//   input) or responsesFile (file input: {key, response | error} lines).
// - POST /v1beta/batches/{id}:cancel; DELETE /v1beta/batches/{id}.
// - POST /upload/v1beta/files with X-Goog-Upload-Protocol: resumable and
//   X-Goog-Upload-Command: start answers X-Goog-Upload-URL; pieces follow
//   with "upload" / "upload, finalize" and X-Goog-Upload-Offset, the last
//   answered {file} with X-Goog-Upload-Status: final.
// - GET /download/v1beta/files/{id}:download?alt=media; DELETE /v1beta/files/{id}.
// A request whose text holds GEMINI_BATCH_REFUSED_WORD fails inside the batch
// with a google.rpc.Status, as a refused request does.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { GEMINI_CHANNELS, startGeminiEmulator } from './emulators/gemini';
import { listenOnLoopback, type ProtocolEmulator } from './emulators/types';

export const GEMINI_BATCH_REFUSED_WORD = 'refuse-in-batch';
const GOOD_KEY = GEMINI_CHANNELS[0].key;
const BATCH_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch';
const OUTPUT_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput';
/** google.rpc.Code by Google's status name. */
const RPC_CODES: Record<string, number> = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8 };

export interface EmulatedGeminiBatch {
  name: string;
  model: string;
  displayName: string;
  /** Inline requests, or the input file's name. */
  requests: Array<{ key: string; request: unknown }>;
  inputFile?: string;
  state: string;
  polls: number;
  output?: Record<string, unknown>;
  successes: number;
  failures: number;
}

export interface GeminiBatchEmulator {
  baseUrl: string;
  /** The Gemini emulator behind it (its requests are the lines' generateContent calls). */
  inner: ProtocolEmulator;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body?: unknown; bytes: number }>;
  batches: Map<string, EmulatedGeminiBatch>;
  files: Map<string, { content: Buffer; displayName?: string }>;
  /** Polls per stage (pending, running) before the batch runs; 0 runs it on the first poll. */
  pollsPerStage: number;
  /** Statuses the next polls answer with instead (a 500 is tried again). */
  failPolls: number[];
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
  ) {
    super(message);
  }
}

const record = (value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
/** A field by its proto JSON name or its original snake_case one (Google reads both). */
const field = (object: Record<string, unknown> | undefined, camel: string) =>
  object?.[camel] ?? object?.[camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
const TERMINAL = new Set(['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED']);

function readBytes(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

export async function startGeminiBatchEmulator(): Promise<GeminiBatchEmulator> {
  const inner = await startGeminiEmulator();
  const batches = new Map<string, EmulatedGeminiBatch>();
  const files = new Map<string, { content: Buffer; displayName?: string }>();
  const uploads = new Map<string, { size: number; displayName?: string; pieces: Buffer[]; received: number }>();
  const emulator = { requests: [], batches, files, pollsPerStage: 0, failPolls: [] } as unknown as GeminiBatchEmulator;

  const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    response.end(JSON.stringify(body));
  };

  const operationOf = (batch: EmulatedGeminiBatch) => {
    const done = TERMINAL.has(batch.state);
    const total = batch.requests.length;
    const metadata: Record<string, unknown> = {
      '@type': BATCH_TYPE,
      model: `models/${batch.model}`,
      displayName: batch.displayName,
      createTime: new Date().toISOString(),
      updateTime: new Date().toISOString(),
      batchStats: {
        requestCount: String(total),
        ...(done
          ? { successfulRequestCount: String(batch.successes), failedRequestCount: String(batch.failures) }
          : { pendingRequestCount: String(total) }),
      },
      state: batch.state,
      name: batch.name,
      ...(batch.output ? { output: batch.output } : {}),
    };
    return {
      name: batch.name,
      metadata,
      ...(done ? { done: true } : {}),
      ...(batch.output ? { response: { '@type': OUTPUT_TYPE, ...batch.output } } : {}),
    };
  };

  /** Runs one request through the Gemini emulator: its response, or the google.rpc.Status it failed with. */
  const runOne = async (model: string, request: unknown) => {
    if (JSON.stringify(request).includes(GEMINI_BATCH_REFUSED_WORD))
      return { error: { code: 3, message: 'The emulator refuses this request inside the batch.' } };
    const answer = await fetch(`${inner.baseUrl}/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': GOOD_KEY },
      body: JSON.stringify(request),
    });
    const body = (await answer.json()) as Record<string, unknown>;
    if (answer.ok) return { response: body };
    const error = record(body.error) ?? {};
    return { error: { code: RPC_CODES[String(error.status)] ?? 13, message: typeof error.message === 'string' ? error.message : '' } };
  };

  const run = async (batch: EmulatedGeminiBatch) => {
    const results = [];
    for (const { key, request } of batch.requests) {
      const result = await runOne(batch.model, request);
      if ('response' in result) batch.successes += 1;
      else batch.failures += 1;
      results.push({ key, ...result });
    }
    if (batch.inputFile) {
      const name = `files/batch-${randomBytes(6).toString('hex')}`;
      files.set(name, { content: Buffer.from(results.map((result) => `${JSON.stringify(result)}\n`).join('')) });
      batch.output = { responsesFile: name };
    } else {
      const inlinedResponses = results.map(({ key, ...result }) => ({ ...result, metadata: { key } }));
      batch.output = { inlinedResponses: { inlinedResponses } };
    }
    batch.state = 'BATCH_STATE_SUCCEEDED';
  };

  const create = (model: string, body: unknown) => {
    const batch = record(record(body)?.batch);
    const input = record(field(batch, 'inputConfig'));
    const displayName = field(batch, 'displayName');
    if (!batch || typeof displayName !== 'string' || !input)
      throw new Refusal(400, 'INVALID_ARGUMENT', '* BatchGenerateContentRequest.batch.display_name: display_name is required\n');
    const fileName = field(input, 'fileName');
    let requests: EmulatedGeminiBatch['requests'];
    if (typeof fileName === 'string') {
      const file = files.get(fileName);
      if (!file) throw new Refusal(404, 'NOT_FOUND', `File ${fileName} not found.`);
      requests = file.content
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { key: string; request: unknown });
    } else {
      const inline = field(record(input.requests), 'requests');
      if (!Array.isArray(inline) || inline.length === 0)
        throw new Refusal(400, 'INVALID_ARGUMENT', '* BatchGenerateContentRequest.batch.input_config: requests is empty\n');
      requests = inline.map((entry: Record<string, unknown>) => ({
        key: typeof record(entry.metadata)?.key === 'string' ? (record(entry.metadata)!.key as string) : '',
        request: entry.request,
      }));
    }
    if (requests.some((entry) => !record(entry.request)))
      throw new Refusal(400, 'INVALID_ARGUMENT', '* BatchGenerateContentRequest: a request is missing\n');
    const name = `batches/emu${randomBytes(8).toString('hex')}`;
    const created: EmulatedGeminiBatch = {
      name,
      model,
      displayName,
      requests,
      ...(typeof fileName === 'string' ? { inputFile: fileName } : {}),
      state: 'BATCH_STATE_PENDING',
      polls: 0,
      successes: 0,
      failures: 0,
    };
    batches.set(name, created);
    return operationOf(created);
  };

  const poll = async (batch: EmulatedGeminiBatch) => {
    const failed = emulator.failPolls.shift();
    if (failed) throw new Refusal(failed, 'INTERNAL', 'An internal error has occurred.');
    if (!TERMINAL.has(batch.state)) {
      batch.polls += 1;
      const stages = emulator.pollsPerStage;
      if (batch.polls > 2 * stages) await run(batch);
      else if (batch.polls > stages) batch.state = 'BATCH_STATE_RUNNING';
    }
    return operationOf(batch);
  };

  const upload = (incoming: IncomingMessage, url: URL, bytes: Buffer, response: ServerResponse) => {
    const command = String(incoming.headers['x-goog-upload-command'] ?? '');
    if (command === 'start') {
      if (incoming.headers['x-goog-upload-protocol'] !== 'resumable')
        throw new Refusal(400, 'INVALID_ARGUMENT', 'Upload protocol must be resumable.');
      const size = Number(incoming.headers['x-goog-upload-header-content-length']);
      const displayName = record(record(JSON.parse(bytes.toString() || '{}'))?.file)?.displayName as string | undefined;
      const id = randomBytes(8).toString('hex');
      uploads.set(id, { size, displayName, pieces: [], received: 0 });
      // Google names its own host here; the client reaches it through its base
      const sessionUrl = `https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable`;
      response.writeHead(200, { 'x-goog-upload-url': sessionUrl, 'x-goog-upload-status': 'active' });
      response.end();
      return;
    }
    const session = uploads.get(url.searchParams.get('upload_id') ?? '');
    if (!session) throw new Refusal(404, 'NOT_FOUND', 'No such upload session.');
    if (Number(incoming.headers['x-goog-upload-offset']) !== session.received)
      throw new Refusal(400, 'INVALID_ARGUMENT', 'The upload offset does not match the bytes received.');
    session.pieces.push(bytes);
    session.received += bytes.length;
    if (!command.includes('finalize')) {
      response.writeHead(200, { 'x-goog-upload-status': 'active' });
      response.end();
      return;
    }
    if (session.received !== session.size) throw new Refusal(400, 'INVALID_ARGUMENT', 'The upload is shorter than announced.');
    const name = `files/${randomBytes(6).toString('hex')}`;
    files.set(name, { content: Buffer.concat(session.pieces), displayName: session.displayName });
    const file = {
      name,
      displayName: session.displayName,
      mimeType: 'application/jsonl',
      sizeBytes: String(session.size),
      state: 'ACTIVE',
    };
    sendJson(response, 200, { file }, { 'x-goog-upload-status': 'final' });
  };

  /** Answers the batch and file paths; false for any other (the Gemini emulator's). */
  const route = async (incoming: IncomingMessage, url: URL, bytes: Buffer, response: ServerResponse): Promise<boolean> => {
    const path = decodeURIComponent(url.pathname);
    const method = incoming.method;
    const create_ = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(path);
    const batchPath = /^\/v1beta\/(batches\/[^/:]+)(:cancel)?$/.exec(path);
    const filePath = /^\/(?:download\/)?v1beta\/(files\/[^/:]+)(:download)?$/.exec(path);
    if (!create_ && !batchPath && !filePath && path !== '/upload/v1beta/files') return false;
    if (incoming.headers['x-goog-api-key'] !== GOOD_KEY)
      throw new Refusal(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    const body = bytes.length > 0 && !path.startsWith('/upload') ? (JSON.parse(bytes.toString()) as unknown) : undefined;
    if (create_ && method === 'POST') sendJson(response, 200, create(create_[1], body));
    else if (path === '/upload/v1beta/files' && method === 'POST') upload(incoming, url, bytes, response);
    else if (batchPath) {
      const batch = batches.get(batchPath[1]);
      if (!batch) throw new Refusal(404, 'NOT_FOUND', `Batch ${batchPath[1]} not found.`);
      if (batchPath[2] && method === 'POST') {
        if (TERMINAL.has(batch.state)) throw new Refusal(400, 'FAILED_PRECONDITION', 'The batch has already ended.');
        batch.state = 'BATCH_STATE_CANCELLED';
        sendJson(response, 200, {});
      } else if (method === 'DELETE') {
        batches.delete(batch.name);
        sendJson(response, 200, {});
      } else sendJson(response, 200, await poll(batch));
    } else if (filePath) {
      const file = files.get(filePath[1]);
      if (!file) throw new Refusal(404, 'NOT_FOUND', `File ${filePath[1]} not found.`);
      if (method === 'DELETE') {
        files.delete(filePath[1]);
        sendJson(response, 200, {});
      } else if (filePath[2] && url.searchParams.get('alt') === 'media') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(file.content);
      } else sendJson(response, 200, { name: filePath[1], sizeBytes: String(file.content.length), state: 'ACTIVE' });
    } else throw new Refusal(405, 'METHOD_NOT_ALLOWED', 'Method not allowed.');
    return true;
  };

  /** Any other path goes to the Gemini emulator, as it came. */
  const forward = async (incoming: IncomingMessage, bytes: Buffer, response: ServerResponse) => {
    const headers = Object.fromEntries(
      Object.entries(incoming.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
    ) as Record<string, string>;
    const answer = await fetch(`${inner.baseUrl}${incoming.url}`, {
      method: incoming.method,
      headers,
      body: incoming.method === 'GET' ? undefined : bytes,
    });
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    if (answer.body) for await (const chunk of answer.body) response.write(chunk);
    response.end();
  };

  const server = createServer((incoming, response) => {
    void (async () => {
      const bytes = await readBytes(incoming);
      const url = new URL(incoming.url ?? '/', 'http://emulator');
      let body: unknown;
      try {
        body = bytes.length > 0 && !url.pathname.startsWith('/upload') ? JSON.parse(bytes.toString()) : undefined;
      } catch {
        body = undefined;
      }
      emulator.requests.push({ method: incoming.method ?? '', path: url.pathname, headers: incoming.headers, body, bytes: bytes.length });
      if (!(await route(incoming, url, bytes, response))) await forward(incoming, bytes, response);
    })().catch((error: unknown) => {
      if (response.headersSent) return void response.destroy();
      if (error instanceof Refusal)
        sendJson(response, error.code, { error: { code: error.code, message: error.message, status: error.status } });
      else sendJson(response, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } });
    });
  });
  const listening = await listenOnLoopback(server);
  return Object.assign(emulator, {
    baseUrl: listening.baseUrl,
    inner,
    close: async () => {
      await listening.close();
      await inner.close();
    },
  });
}
