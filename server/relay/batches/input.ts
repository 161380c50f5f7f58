// A batch's input file, checked as OpenAI checks it before anything is held:
// purpose "batch", JSONL, each line {custom_id (unique), method "POST", url
// (the batch's endpoint), body (with the model: one model a file)}, and each
// body priced as the relay prices that request (lineCall.ts priceLine), so a
// line a client's call would have refused (a model the key may not use, one
// with no price) refuses the file. A refusal names the line (counted from 1).
// The file is read line by line as its chunks come from the store.
// Reference: https://platform.openai.com/docs/api-reference/batch/request-input
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import { priceLine } from './lineCall';

/** OpenAI's limits: requests a batch, bytes an input file. */
export const MAX_BATCH_LINES = 50_000;
export const MAX_INPUT_BYTES = 200 * 1024 * 1024;

/** One checked line, as the batch stores it. */
export interface InputLine {
  line: number;
  customId: string;
  body: string;
  bound: number;
}

export interface CheckedInput {
  lines: InputLine[];
  model: string;
  bound: number;
}

const badLine = (line: number, message: string): RelayError => ({
  ...relayError(400, `Line ${line} of the input file: ${message}`, 'invalid_batch_input'),
  param: 'input_file_id',
});

const tooLarge = (): RelayError => ({
  ...relayError(400, 'the input file is larger than 200 MB', 'invalid_batch_input'),
  param: 'input_file_id',
});

/** The file's lines as its chunks arrive (never the whole file in one buffer or string); too large ends it with the refusal. */
async function* linesOf(content: Readable): AsyncGenerator<string | RelayError> {
  const decoder = new StringDecoder('utf8');
  let size = 0;
  let rest = '';
  for await (const chunk of content) {
    size += (chunk as Buffer).length;
    if (size > MAX_INPUT_BYTES) {
      content.destroy();
      yield tooLarge();
      return;
    }
    const texts = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = texts.pop()!;
    yield* texts;
  }
  yield rest + decoder.end();
}

/** The request of one line, or why it is refused. */
function requestOf(
  text: string,
  line: number,
  endpoint: string,
  seen: Set<string>,
): { customId: string; body: Record<string, unknown> } | RelayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return badLine(line, 'not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return badLine(line, 'not a JSON object');
  const request = parsed as Record<string, unknown>;
  if (typeof request.custom_id !== 'string' || request.custom_id === '') return badLine(line, 'custom_id must be a non-empty string');
  if (seen.has(request.custom_id)) return badLine(line, `custom_id "${request.custom_id}" is used by an earlier line; each must be unique`);
  if (request.method !== 'POST') return badLine(line, 'method must be "POST"');
  if (request.url !== endpoint) return badLine(line, `url must be the batch's endpoint, ${endpoint}`);
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return badLine(line, 'body must be a JSON object');
  const fields = body as Record<string, unknown>;
  if (typeof fields.model !== 'string' || fields.model === '') return badLine(line, 'body.model is required');
  if (fields.stream === true) return badLine(line, 'stream is not supported in a batch');
  return { customId: request.custom_id, body: fields };
}

/** Reads and checks the input file for `caller`: its lines with their bounds, or the refusal naming the first bad line. */
export async function checkInput(
  ctx: RelayContext,
  caller: RelayCaller,
  endpoint: string,
  content: Readable,
): Promise<CheckedInput | RelayError> {
  const seen = new Set<string>();
  const lines: InputLine[] = [];
  let model = '';
  let bound = 0;
  let index = -1;
  for await (const read of linesOf(content)) {
    index += 1;
    if (isRelayError(read)) return read;
    const text = read.trim();
    if (text === '') continue;
    const number = index + 1;
    if (lines.length >= MAX_BATCH_LINES) return badLine(number, `a batch holds at most ${MAX_BATCH_LINES} requests`);
    const request = requestOf(text, number, endpoint, seen);
    if (isRelayError(request)) return request;
    const model_ = request.body.model as string;
    if (model && model_ !== model) return badLine(number, `every request of a batch must use one model (${model} before, ${model_} here)`);
    model = model_;
    const priced = priceLine(ctx, caller, endpoint, request.body);
    if (isRelayError(priced)) return badLine(number, priced.message);
    seen.add(request.customId);
    lines.push({ line: lines.length, customId: request.customId, body: JSON.stringify(request.body), bound: priced.bound });
    bound += priced.bound;
  }
  if (lines.length === 0) return { ...relayError(400, 'the input file has no requests', 'invalid_batch_input'), param: 'input_file_id' };
  return { lines, model, bound };
}
