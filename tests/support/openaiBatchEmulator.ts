// OpenAI's Files and Batch APIs inside the OpenAI emulator (which mounts
// these routes), at OpenAI's paths (/v1/files, /v1/batches) and Azure
// OpenAI's (/openai/files, /openai/batches, which need an api-version).
// References: https://platform.openai.com/docs/api-reference/files
// https://platform.openai.com/docs/api-reference/batch
// https://learn.microsoft.com/azure/ai-services/openai/how-to/batch
//
// - POST /files takes multipart/form-data (purpose, file); a file and a batch
//   belong to the key that made them (another key's request answers 404).
// - POST /batches creates a batch `validating`; each GET of it moves it one
//   stage on (validating → in_progress → finalizing → completed) once it has
//   waited `pollsPerStage` polls in its stage. Validation reads the input file:
//   a line that is not JSON, lacks a custom_id, repeats one or names another
//   URL than the batch's endpoint fails the batch (errors.data names the line).
// - Entering finalizing runs every line through the emulator's own handlers
//   (a loopback POST with the batch's key); a 2xx answer goes to the output
//   file, any other to the error file. A line whose body carries
//   `emulator: {batch_error: {code, message, status?}}` is not run: it goes to
//   the error file as that HTTP status, or with no response when status is absent.
// - `complete(id)` finishes a batch at once; `failPolls` makes the next GETs of
//   a batch answer 500 or 429; POST /batches/{id}/cancel makes it cancelling,
//   then cancelled at its next poll; DELETE /files/{id} forgets a file.
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

interface EmulatedFile {
  id: string;
  key: string;
  filename: string;
  purpose: string;
  createdAt: number;
  content: Buffer;
}

interface EmulatedBatch {
  id: string;
  key: string;
  endpoint: string;
  inputFileId: string;
  status: string;
  waited: number;
  createdAt: number;
  stamps: Record<string, number>;
  counts: { total: number; completed: number; failed: number };
  outputFileId: string | null;
  errorFileId: string | null;
  errors: { object: 'list'; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  ran: boolean;
}

export interface BatchEmulator {
  /** Polls a batch waits in each stage before the next one moves it on (0: every poll moves it). */
  pollsPerStage: number;
  /** HTTP statuses (500, 429) the next GETs of a batch answer instead of it, one a poll. */
  failPolls: number[];
  files: Map<string, EmulatedFile>;
  batches: Map<string, EmulatedBatch>;
  /** Runs a batch's lines now and completes it. */
  complete(id: string): Promise<void>;
}

export interface BatchRequest {
  method: string;
  /** The path without its query. */
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  key: string;
}

const ROUTE = /^\/(v1|openai)\/(files|batches)(?:\/([^/]+))?(?:\/(content|cancel))?$/;
const PURPOSES = new Set(['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals']);
const ENDPOINTS = new Set(['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses', '/v1/moderations']);
const ACTIVE = new Set(['validating', 'in_progress', 'finalizing']);
const NEXT_STAGE: Record<string, string> = { validating: 'in_progress', in_progress: 'finalizing', finalizing: 'completed' };
const LINES_AT_ONCE = 16;

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, message: string, code: string | null = null, param: string | null = null) {
  const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
  sendJson(response, status, { error: { message, type, param, code } });
}

const now = () => Math.floor(Date.now() / 1000);

/** A loopback POST of JSON (node:http with kept-alive sockets: a thousand lines run several times faster than by fetch). */
function postJson(agent: Agent, url: string, key: string, payload: unknown): Promise<{ status: number; body: unknown }> {
  const text = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: `Bearer ${key}` },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}

function fileObject(file: EmulatedFile) {
  return {
    id: file.id,
    object: 'file',
    bytes: file.content.length,
    created_at: file.createdAt,
    expires_at: null,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
  };
}

function batchObject(batch: EmulatedBatch) {
  const at = (status: string) => batch.stamps[status] ?? null;
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: batch.errors,
    input_file_id: batch.inputFileId,
    completion_window: '24h',
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: batch.createdAt,
    in_progress_at: at('in_progress'),
    expires_at: batch.createdAt + 86_400,
    finalizing_at: at('finalizing'),
    completed_at: at('completed'),
    failed_at: at('failed'),
    expired_at: null,
    cancelling_at: at('cancelling'),
    cancelled_at: at('cancelled'),
    request_counts: batch.counts,
    metadata: null,
  };
}

interface InputLine {
  custom_id: string;
  url: string;
  body: Record<string, unknown>;
}

/** The input file's lines, or the first fault that fails the batch. */
function readInput(batch: EmulatedBatch, file: EmulatedFile): InputLine[] | NonNullable<EmulatedBatch['errors']>['data'][number] {
  const lines: InputLine[] = [];
  const seen = new Set<string>();
  const texts = file.content.toString('utf8').split('\n');
  for (const [index, text] of texts.entries()) {
    if (!text.trim()) continue;
    const fault = (code: string, message: string, param: string | null) => ({ code, message, param, line: index + 1 });
    let line: Partial<InputLine> & { method?: unknown };
    try {
      line = JSON.parse(text) as typeof line;
    } catch {
      return fault('invalid_json_line', 'This line is not parseable as valid JSON.', null);
    }
    if (typeof line.custom_id !== 'string') return fault('missing_required_parameter', 'The line has no custom_id.', 'custom_id');
    if (seen.has(line.custom_id)) return fault('duplicate_custom_id', 'The custom_id for this request is a duplicate.', 'custom_id');
    if (line.method !== 'POST') return fault('invalid_method', 'Only POST is supported.', 'method');
    if (line.url !== batch.endpoint) return fault('mismatched_endpoint', "The line's url is not the batch's endpoint.", 'url');
    seen.add(line.custom_id);
    lines.push({ custom_id: line.custom_id, url: line.url, body: line.body ?? {} });
  }
  return lines;
}

export function createBatchEmulator(baseUrl: () => string) {
  let serial = 0;
  const next = (prefix: string) => `${prefix}${(serial += 1)}`;
  const emulator: BatchEmulator = {
    pollsPerStage: 0,
    failPolls: [],
    files: new Map(),
    batches: new Map(),
    complete: async (id) => {
      const batch = emulator.batches.get(id);
      if (!batch) throw new Error(`no batch ${id}`);
      while (ACTIVE.has(batch.status)) await advance(batch);
    },
  };

  const store = (key: string, filename: string, purpose: string, content: Buffer) => {
    const file = { id: next('file-emu'), key, filename, purpose, createdAt: now(), content };
    emulator.files.set(file.id, file);
    return file;
  };

  /** One line's output object: run through the emulator's own handlers unless it asks for an error. */
  async function runLine(batch: EmulatedBatch, line: InputLine, agent: Agent) {
    const id = next('batch_req_emu');
    const asked = (line.body.emulator as { batch_error?: { code?: string; message?: string; status?: number } } | undefined)?.batch_error;
    if (asked && asked.status === undefined)
      return { id, custom_id: line.custom_id, response: null, error: { code: asked.code ?? 'error', message: asked.message ?? '' } };
    let status: number;
    let body: unknown;
    if (asked) {
      status = asked.status!;
      body = { error: { message: asked.message ?? '', type: 'invalid_request_error', param: null, code: asked.code ?? null } };
    } else {
      const path = line.url.startsWith('/v1/') ? line.url : `/v1${line.url}`;
      ({ status, body } = await postJson(agent, `${baseUrl()}${path}`, batch.key, line.body));
    }
    return { id, custom_id: line.custom_id, response: { status_code: status, request_id: next('req_emu'), body }, error: null };
  }

  /** Runs the lines and writes the output and error files (each only when it has lines). */
  async function runLines(batch: EmulatedBatch, lines: InputLine[]) {
    const output: string[] = [];
    const errors: string[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: LINES_AT_ONCE });
    try {
      for (let start = 0; start < lines.length; start += LINES_AT_ONCE) {
        const done = await Promise.all(lines.slice(start, start + LINES_AT_ONCE).map((line) => runLine(batch, line, agent)));
        for (const result of done) {
          const ok = result.response !== null && result.response.status_code < 300;
          (ok ? output : errors).push(JSON.stringify(result));
        }
      }
    } finally {
      agent.destroy();
    }
    batch.counts = { total: lines.length, completed: output.length, failed: errors.length };
    const write = (texts: string[]) =>
      texts.length ? store(batch.key, `${batch.id}_output.jsonl`, 'batch_output', Buffer.from(`${texts.join('\n')}\n`)).id : null;
    batch.outputFileId = write(output);
    batch.errorFileId = write(errors);
    batch.ran = true;
  }

  const moveTo = (batch: EmulatedBatch, status: string) => {
    batch.status = status;
    batch.stamps[status] = now();
  };

  async function advance(batch: EmulatedBatch) {
    if (batch.status === 'cancelling') return moveTo(batch, 'cancelled');
    if (!ACTIVE.has(batch.status)) return;
    const stage = NEXT_STAGE[batch.status];
    if (stage === 'in_progress') {
      const input = readInput(batch, emulator.files.get(batch.inputFileId)!);
      if (!Array.isArray(input)) {
        batch.errors = { object: 'list', data: [input] };
        return moveTo(batch, 'failed');
      }
      batch.counts = { total: input.length, completed: 0, failed: 0 };
    }
    if (stage === 'finalizing') {
      const input = readInput(batch, emulator.files.get(batch.inputFileId)!) as InputLine[];
      await runLines(batch, input);
    }
    moveTo(batch, stage);
  }

  async function upload(request: BatchRequest, response: ServerResponse) {
    const contentType = String(request.headers['content-type'] ?? '');
    if (!contentType.startsWith('multipart/form-data')) return sendError(response, 400, 'The upload must be multipart/form-data.');
    const form = await new Response(new Uint8Array(request.rawBody), { headers: { 'content-type': contentType } })
      .formData()
      .catch(() => undefined);
    const purpose = form?.get('purpose');
    const file = form?.get('file');
    if (typeof purpose !== 'string' || !PURPOSES.has(purpose)) return sendError(response, 400, 'Invalid purpose.', null, 'purpose');
    if (!file || typeof file === 'string') return sendError(response, 400, 'No file was uploaded.', null, 'file');
    const stored = store(request.key, file.name, purpose, Buffer.from(await file.arrayBuffer()));
    return sendJson(response, 200, fileObject(stored));
  }

  function createBatch(request: BatchRequest, azure: boolean, response: ServerResponse) {
    const body = JSON.parse(request.rawBody.toString('utf8') || '{}') as Record<string, unknown>;
    const input = emulator.files.get(String(body.input_file_id));
    if (!input || input.key !== request.key) return sendError(response, 400, 'The input file does not exist.', null, 'input_file_id');
    if (input.purpose !== 'batch') return sendError(response, 400, 'The input file must have purpose batch.', null, 'input_file_id');
    const endpoint = String(body.endpoint);
    if (!ENDPOINTS.has(azure && !endpoint.startsWith('/v1/') ? `/v1${endpoint}` : endpoint))
      return sendError(response, 400, `Invalid endpoint ${endpoint}.`, null, 'endpoint');
    if (body.completion_window !== '24h') return sendError(response, 400, 'completion_window must be 24h.', null, 'completion_window');
    const batch: EmulatedBatch = {
      id: next('batch_emu'),
      key: request.key,
      endpoint,
      inputFileId: input.id,
      status: 'validating',
      waited: 0,
      createdAt: now(),
      stamps: {},
      counts: { total: 0, completed: 0, failed: 0 },
      outputFileId: null,
      errorFileId: null,
      errors: null,
      ran: false,
    };
    emulator.batches.set(batch.id, batch);
    return sendJson(response, 200, batchObject(batch));
  }

  async function pollBatch(batch: EmulatedBatch, response: ServerResponse) {
    const failure = emulator.failPolls.shift();
    if (failure === 429) return sendError(response, 429, 'Rate limit reached.', 'rate_limit_exceeded');
    if (failure !== undefined) return sendError(response, failure, 'The server had an error while processing your request.');
    if (batch.status === 'cancelling' || batch.waited >= emulator.pollsPerStage) {
      batch.waited = 0;
      await advance(batch);
    } else batch.waited += 1;
    return sendJson(response, 200, batchObject(batch));
  }

  function cancelBatch(batch: EmulatedBatch, response: ServerResponse) {
    if (!ACTIVE.has(batch.status))
      return sendError(response, 409, `Cannot cancel a batch with status ${batch.status}.`, 'batch_not_cancellable');
    batch.status = 'cancelling';
    batch.stamps.cancelling = now();
    // a cancelled batch keeps what it ran, and only that
    if (!batch.ran) batch.counts = { ...batch.counts, completed: 0, failed: 0 };
    return sendJson(response, 200, batchObject(batch));
  }

  function fileRoute(request: BatchRequest, file: EmulatedFile, action: string | undefined, response: ServerResponse) {
    if (request.method === 'GET' && action === 'content') {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.content.length });
      return response.end(file.content);
    }
    if (request.method === 'GET' && !action) return sendJson(response, 200, fileObject(file));
    if (request.method === 'DELETE' && !action) {
      emulator.files.delete(file.id);
      return sendJson(response, 200, { id: file.id, object: 'file', deleted: true });
    }
    return sendError(response, 404, `Invalid URL (${request.method} ${request.path})`);
  }

  /** Answers a Files or Batch API request; false for any other path. */
  async function handle(request: BatchRequest, response: ServerResponse): Promise<boolean> {
    const match = ROUTE.exec(request.path);
    if (!match) return false;
    const [, prefix, kind, id, action] = match;
    if (prefix === 'openai' && !new URLSearchParams(request.query).get('api-version')) {
      sendJson(response, 404, { error: { code: '404', message: 'Resource not found' } });
      return true;
    }
    const azure = prefix === 'openai';
    if (!id && request.method === 'POST') await (kind === 'files' ? upload(request, response) : createBatch(request, azure, response));
    else if (kind === 'files') {
      const file = id ? emulator.files.get(id) : undefined;
      if (!file || file.key !== request.key) sendError(response, 404, `No such File object: ${id}`, null, 'id');
      else fileRoute(request, file, action, response);
    } else {
      const batch = id ? emulator.batches.get(id) : undefined;
      if (!batch || batch.key !== request.key) sendError(response, 404, `No batch found with id '${id}'.`);
      else if (request.method === 'GET' && !action) await pollBatch(batch, response);
      else if (request.method === 'POST' && action === 'cancel') cancelBatch(batch, response);
      else sendError(response, 404, `Invalid URL (${request.method} ${request.path})`);
    }
    return true;
  }

  return { emulator, handle };
}
