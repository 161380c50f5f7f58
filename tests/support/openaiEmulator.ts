// A small upstream that speaks the OpenAI wire format exactly (JSON bodies, SSE
// streams, error objects, usage), for the relay tests and the benchmark.
// Reference: https://platform.openai.com/docs/api-reference
//
// Behaviour is chosen per request so one emulator serves many tests:
// - the API key picks an error: `sk-dead` → 401 invalid_api_key, `sk-deactivated`
//   → 401 account_deactivated, `sk-broke` → 429 insufficient_quota, `sk-busy` →
//   429 rate limit (so does `sk-busy-too`, a second key of one account), `sk-down` → 500, `sk-drop` → the socket is destroyed, `sk-cut` → a JSON answer
//   breaks off halfway;
//   `sk-slow` answers normally after SLOW_KEY_DELAY_MS (for response-time limits);
//   `sk-hang` never answers, holding the request open until the client leaves (for timeouts);
//   `sk-dead-in-200` reports invalid_api_key inside an HTTP 200 body, as some proxies do;
// - header `x-emulator-chunks` (default 5) and `x-emulator-delay-ms` (default 0),
//   or the body field `emulator: {chunks, delay_ms}` (which a gateway forwards
//   like any unknown field), shape a stream; `x-emulator-no-usage: 1` (or the key `sk-no-usage`) leaves
//   usage out of the answer; the answer has `chunks` completion tokens whatever
//   max_tokens says (a provider that overruns the limit) unless
//   `emulator: {respect_max_tokens: true}` (or `x-emulator-respect-max-tokens: 1`)
//   cuts it at max_tokens / max_completion_tokens, as a provider should;
//   `emulator: {cached_tokens: n}` reports n of the prompt tokens as served from the
//   prompt cache (usage.prompt_tokens_details.cached_tokens), and
//   `emulator: {reasoning_tokens: n}` adds n hidden reasoning tokens, counted
//   inside completion_tokens (usage.completion_tokens_details.reasoning_tokens), as o-series models do;
//   `emulator: {hold: true}` holds a chat stream open after its first chunk until the test calls
//   releaseHeld() (or the client leaves), so a test decides how long streams last, not the machine's speed;
// - Tools (chat and Responses): when the request has function tools, tool_choice is
//   not `none`, and the last message (input item) is the user's text naming one of
//   the tools, the answer is one call of that tool (finish_reason `tool_calls`; a
//   Responses `function_call` item) whose arguments hold each `required` property
//   of its parameters as that text; call ids are `call_emu<n>_0`. Completion tokens
//   are the words of the arguments' JSON;
// - POST /v1/responses answers in the Responses wire format (a Response object, or
//   its event stream from response.created to response.completed, each event with
//   its sequence_number), with the same `emulator` knobs as chat (chunks, delay_ms,
//   respect_max_tokens against max_output_tokens: status incomplete, cached_tokens,
//   reasoning_tokens); a last input item that is a function_call_output is answered
//   "the tool said: <output>"; previous_response_id is refused as unknown (it stores nothing);
// - the key `sk-tools` makes a chat with tools call one: the first tool (or the one tool_choice names), each
//   required argument set to the last user message, 1 completion token per argument plus 1; once the last
//   message is a tool result the answer is `the tool said: <result>` (a word a token);
// - GET billing paths answer fixed figures (BILLING_ANSWERS) for balance queries;
// - POST /v1/images/edits and /variations parse their multipart form (no image: a 400) and answer `n` images,
//   with `received`: the byte length of each image part, for the tests to check the upload came intact;
// - the Files and Batch APIs (OpenAI's /v1/files and /v1/batches, Azure's /openai/...) are
//   openaiBatchEmulator.ts, mounted here and steered through `batches`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBatchEmulator, type BatchEmulator } from './openaiBatchEmulator';
import { jsonText } from './jsonText';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or the raw body as text for other content types. */
  body: unknown;
  rawBody: Buffer;
  /** The query string, without the `?`. */
  query: string;
}

export interface OpenAIEmulator {
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  abortedRequests: number;
  /** The Files and Batch APIs' state and knobs. */
  batches: BatchEmulator;
  /** Streams held open by `emulator: {hold: true}` right now. */
  readonly held: number;
  /** Lets every held stream go on to its end; returns how many were held. */
  releaseHeld(): number;
  close(): Promise<void>;
}

/** Tokens the emulator reports: one per whitespace-separated word, at least 1. */
export function countWords(text: string): number {
  return Math.max(1, text.split(/\s+/).filter(Boolean).length);
}

function promptText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string') parts.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (typeof record.content === 'string' || Array.isArray(record.content)) collect(record.content);
      if (typeof record.text === 'string') parts.push(record.text);
    }
  };
  collect(body.messages ?? body.prompt ?? body.input ?? '');
  return parts.join(' ');
}

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, message: string, type: string, code: string | null) {
  sendJson(response, status, { error: { message, type, param: null, code } });
}

const keyFailures: Record<string, (response: ServerResponse) => void> = {
  'sk-dead': (response) => sendError(response, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
  'sk-deactivated': (response) =>
    sendError(response, 401, 'This account has been deactivated.', 'invalid_request_error', 'account_deactivated'),
  'sk-broke': (response) => sendError(response, 429, 'You exceeded your current quota.', 'insufficient_quota', 'insufficient_quota'),
  'sk-busy': (response) => sendError(response, 429, 'Rate limit reached.', 'requests', 'rate_limit_exceeded'),
  'sk-busy-too': (response) => sendError(response, 429, 'Rate limit reached.', 'requests', 'rate_limit_exceeded'),
  'sk-down': (response) => sendError(response, 500, 'The server had an error.', 'server_error', null),
  'sk-drop': (response) => response.socket?.destroy(),
  'sk-cut': (response) => {
    // a 200 JSON answer that breaks off halfway through its body
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': 200 });
    response.write('{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi');
    setTimeout(() => response.socket?.destroy(), 5);
  },
  'sk-dead-in-200': (response) => sendError(response, 200, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
};

interface FunctionTool {
  name: string;
  parameters?: { properties?: Record<string, { type?: string }>; required?: string[] };
}

/** The text of a message's content: a string, or its text parts. */
const contentText = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('')
      : '';

/** The tool the answer calls, under the conventions above; `tools` already in one shape (name, parameters). */
function calledTool(
  tools: FunctionTool[],
  toolChoice: unknown,
  last: { role?: unknown; content?: unknown } | undefined,
): FunctionTool | undefined {
  if (tools.length === 0 || toolChoice === 'none' || last?.role !== 'user') return undefined;
  const text = contentText(last.content);
  return tools.find((tool) => text.includes(tool.name));
}

/** The arguments of a call: each required property as the user's text (a string one), else a placeholder of its type. */
function toolArguments(tool: FunctionTool, text: string): string {
  const input: Record<string, unknown> = {};
  for (const name of tool.parameters?.required ?? []) {
    const kind = tool.parameters?.properties?.[name]?.type;
    input[name] = kind === 'number' || kind === 'integer' ? 1 : kind === 'boolean' ? true : text;
  }
  return JSON.stringify(input);
}

/** Chat's function tools in one shape. */
const chatTools = (tools: unknown): FunctionTool[] =>
  (Array.isArray(tools) ? tools : []).flatMap((tool) =>
    tool?.type === 'function' && typeof tool.function?.name === 'string' ? [tool.function as FunctionTool] : [],
  );

/** Responses' function tools in one shape. */
const responsesTools = (tools: unknown): FunctionTool[] =>
  (Array.isArray(tools) ? tools : []).flatMap((tool) =>
    tool?.type === 'function' && typeof tool.name === 'string' ? [tool as FunctionTool] : [],
  );

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/** How long `sk-slow` waits before answering. */
export const SLOW_KEY_DELAY_MS = 1200;

/**
 * Balance endpoints: OpenAI's dashboard (balance = 120 - 2050/100 = 99.5 USD),
 * the credit_grants variant of CloseAI, API2GPT and AIGC2D, OpenAI-SB and AI Proxy;
 * and, in their vendors' documented shapes, DeepSeek (110.00 CNY), Moonshot
 * (49.58894 CNY), OpenRouter (100.5 - 25.75 = 74.75 USD), SiliconFlow (88.88 CNY), Novita
 * (1234500 ten-thousandths = 123.45 USD) and StepFun (26.5 CNY).
 */
export const BILLING_ANSWERS: Record<string, unknown> = {
  '/v1/dashboard/billing/subscription': { object: 'billing_subscription', hard_limit_usd: 120, has_payment_method: true },
  '/v1/dashboard/billing/usage': { object: 'list', total_usage: 2050 },
  '/dashboard/billing/credit_grants': {
    object: 'credit_summary',
    total_granted: 20,
    total_used: 7.5,
    total_available: 12.5,
    total_remaining: 11.25,
  },
  '/sb-api/user/status': { msg: 'ok', data: { credit: '35000' } },
  '/api/report/getUserOverview': { success: true, message: '', data: { totalPoints: 42.5 } },
  // https://api-docs.deepseek.com/api/get-user-balance
  '/user/balance': {
    is_available: true,
    balance_infos: [{ currency: 'CNY', total_balance: '110.00', granted_balance: '10.00', topped_up_balance: '100.00' }],
  },
  // https://platform.moonshot.cn/docs/api/balance
  '/v1/users/me/balance': {
    code: 0,
    data: { available_balance: 49.58894, voucher_balance: 46.58893, cash_balance: 3.00001 },
    scode: '0x0',
    status: true,
  },
  // https://openrouter.ai/docs/api/api-reference/credits/get-credits
  '/api/v1/credits': { data: { total_credits: 100.5, total_usage: 25.75 } },
  // https://docs.siliconflow.cn/en/api-reference/userinfo/get-user-info
  '/v1/user/info': {
    code: 20000,
    message: 'OK',
    status: true,
    data: {
      id: 'userid',
      name: 'username',
      image: 'user_avatar_image_url',
      email: 'user_email_address',
      isAdmin: false,
      balance: '0.88',
      status: 'normal',
      introduction: '',
      role: '',
      chargeBalance: '88.00',
      totalBalance: '88.88',
    },
  },
  // https://novita.ai/docs/api-reference/basic-get-user-balance
  '/openapi/v1/billing/balance/detail': {
    availableBalance: '1234500',
    cashBalance: '1034500',
    creditLimit: '200000',
    pendingCharges: '0',
    outstandingInvoices: '0',
  },
  // https://platform.stepfun.com/docs/zh/api-reference/accounts/get
  '/v1/accounts': { object: 'account', type: 'prepaid', balance: 26.5, total_cash_balance: 20, total_voucher_balance: 6.5 },
};

export interface EmulatorOptions {
  /**
   * Keep every request for the tests to inspect (the default). The benchmark
   * turns it off: a record that grows by hundreds of thousands of requests
   * slows the emulator down as a run goes on, and so whatever is measured last.
   */
  record?: boolean;
  /** A stream's default length and pace, when the request sets neither (a translated request carries no `emulator` field). */
  chunks?: number;
  delayMs?: number;
}

/** The vector every embedding gets. */
const EMBEDDING = [0.0023, -0.0093, 0.0158];

/** The operation at the end of a path, whatever prefix a vendor puts before it. */
const OPERATION_PATH =
  /\/(chat\/completions|completions|embeddings|moderations|images\/(?:generations|edits|variations)|audio\/(?:speech|transcriptions|translations)|edits)$/;

type Item = Record<string, unknown> & { type?: string };

/**
 * Image edits and variations (multipart): the form parsed as OpenAI would (a form that does not parse, or has no
 * image, is a 400), and `n` images answered, with the byte length of each image part it read (`received`).
 */
async function answerImageForm(rawBody: Buffer, contentType: string, response: ServerResponse, created: number): Promise<void> {
  const form = await new Response(new Uint8Array(rawBody), { headers: { 'content-type': contentType } }).formData().catch(() => undefined);
  const images = form ? [...form.getAll('image'), ...form.getAll('image[]')].filter((part) => part instanceof Blob) : [];
  if (images.length === 0)
    return sendError(response, 400, "Missing required parameter: 'image'.", 'invalid_request_error', 'missing_required_parameter');
  const count = Number(form!.get('n') ?? 1);
  return sendJson(response, 200, {
    created,
    data: Array.from({ length: count }, (_, index) => ({ url: `https://images.example/edit-${created}-${index}.png` })),
    received: images.map((image) => image.size),
  });
}

/** Counts a stream whose client went away before its end; the answer is whether it has. */
function watchAbort(response: ServerResponse, state: { abortedRequests: number }): () => boolean {
  let aborted = false;
  response.on('close', () => {
    if (!response.writableFinished) {
      aborted = true;
      state.abortedRequests += 1;
    }
  });
  return () => aborted;
}

/** The prompt of a Responses request as text: instructions, messages' text, calls' outputs. */
function responsesPromptText(body: Record<string, unknown>): string {
  const parts = [typeof body.instructions === 'string' ? body.instructions : ''];
  if (typeof body.input === 'string') parts.push(body.input);
  for (const item of Array.isArray(body.input) ? (body.input as Item[]) : []) {
    if (item?.type === 'function_call_output') parts.push(typeof item.output === 'string' ? item.output : contentText(item.output));
    else if (item && (item.type === undefined || item.type === 'message')) parts.push(contentText(item.content));
  }
  return parts.join(' ');
}

/** OpenAI's Responses API (https://platform.openai.com/docs/api-reference/responses): a Response, or its event stream. */
async function answerResponses(
  json: Record<string, unknown>,
  headers: IncomingMessage['headers'],
  options: EmulatorOptions,
  response: ServerResponse,
  state: { abortedRequests: number },
  created: number,
  withUsage: boolean,
): Promise<void> {
  if (json.previous_response_id !== undefined && json.previous_response_id !== null) {
    return sendJson(response, 400, {
      error: {
        message: `Previous response with id '${jsonText(json.previous_response_id)}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
  }
  const model = typeof json.model === 'string' ? json.model : 'gpt-4o';
  const shape = (json.emulator ?? {}) as {
    chunks?: number;
    delay_ms?: number;
    respect_max_tokens?: boolean;
    cached_tokens?: number;
    reasoning_tokens?: number;
  };
  const limit = Number(json.max_output_tokens ?? 0) || Infinity;
  const respectLimit = shape.respect_max_tokens === true || headers['x-emulator-respect-max-tokens'] === '1';
  const wanted = Number(headers['x-emulator-chunks'] ?? shape.chunks ?? options.chunks ?? 5);
  const delayMs = Number(headers['x-emulator-delay-ms'] ?? shape.delay_ms ?? options.delayMs ?? 0);
  const input: Item[] =
    typeof json.input === 'string' ? [{ role: 'user', content: json.input }] : Array.isArray(json.input) ? (json.input as Item[]) : [];
  const last = input.at(-1);
  const tool = calledTool(
    responsesTools(json.tools),
    json.tool_choice,
    last && (last.type === undefined || last.type === 'message') ? (last as { role?: unknown; content?: unknown }) : undefined,
  );
  const id = `resp_emu${created}`;
  let deltas: string[];
  if (last?.type === 'function_call_output')
    deltas = `the tool said: ${typeof last.output === 'string' ? last.output : contentText(last.output)}`
      .split(' ')
      .map((word, index) => (index === 0 ? word : ` ${word}`));
  else deltas = Array.from({ length: wanted }, (_, index) => (index === 0 ? 'word0' : ` word${index}`));
  const cut = !tool && respectLimit && deltas.length > limit;
  if (cut) deltas = deltas.slice(0, limit);
  const call = tool
    ? {
        id: `fc_emu${created}_0`,
        type: 'function_call',
        status: 'completed',
        arguments: toolArguments(tool, contentText(last!.content)),
        call_id: `call_emu${created}_0`,
        name: tool.name,
      }
    : undefined;
  const promptTokens = countWords(responsesPromptText(json));
  const reasoningTokens = Math.max(0, Number(shape.reasoning_tokens ?? 0) || 0);
  const cachedTokens = Math.min(promptTokens, Math.max(0, Number(shape.cached_tokens ?? 0) || 0));
  const outputTokens = (call ? countWords(call.arguments) : deltas.length) + reasoningTokens;
  const usage = {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: cachedTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: promptTokens + outputTokens,
  };
  const text = deltas.join('');
  const status = cut ? 'incomplete' : 'completed';
  const message = (itemStatus: string, content: unknown[]) => ({
    id: `msg_emu${created}`,
    type: 'message',
    status: itemStatus,
    content,
    role: 'assistant',
  });
  const part = (partText: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: partText });
  const output = call ? [call] : [message(status, [part(text)])];
  const base = {
    id,
    object: 'response',
    created_at: created,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: json.instructions ?? null,
    max_output_tokens: json.max_output_tokens ?? null,
    max_tool_calls: null,
    model,
    output: [] as unknown[],
    parallel_tool_calls: json.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: (json.reasoning as { effort?: unknown } | undefined)?.effort ?? null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: json.store ?? true,
    temperature: json.temperature ?? 1,
    text: json.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: json.tool_choice ?? 'auto',
    tools: json.tools ?? [],
    top_logprobs: 0,
    top_p: json.top_p ?? 1,
    truncation: 'disabled',
    usage: null as unknown,
    user: json.user ?? null,
    metadata: json.metadata ?? {},
  };
  const final = {
    ...base,
    status,
    incomplete_details: cut ? { reason: 'max_output_tokens' } : null,
    output,
    usage: withUsage ? usage : null,
  };
  if (json.stream !== true) return sendJson(response, 200, final);

  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const left = watchAbort(response, state);
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => {
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`);
    sequence += 1;
  };
  send('response.created', { response: base });
  send('response.in_progress', { response: base });
  if (call) {
    send('response.output_item.added', { output_index: 0, item: { ...call, status: 'in_progress', arguments: '' } });
    const half = Math.ceil(call.arguments.length / 2);
    for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (delayMs > 0) await sleep(delayMs);
      if (left()) return;
      send('response.function_call_arguments.delta', { item_id: call.id, output_index: 0, delta: piece, obfuscation: 'x' });
    }
    send('response.function_call_arguments.done', { item_id: call.id, output_index: 0, arguments: call.arguments });
  } else {
    const at = { item_id: `msg_emu${created}`, output_index: 0 };
    send('response.output_item.added', { output_index: 0, item: message('in_progress', []) });
    send('response.content_part.added', { ...at, content_index: 0, part: part('') });
    for (const delta of deltas) {
      if (delayMs > 0) await sleep(delayMs);
      if (left()) return;
      send('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [], obfuscation: 'x' });
    }
    send('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] });
    send('response.content_part.done', { ...at, content_index: 0, part: part(text) });
  }
  send('response.output_item.done', { output_index: 0, item: output[0] });
  send(cut ? 'response.incomplete' : 'response.completed', { response: final });
  response.end();
}

/** `sk-tools`: a tool call for a question, the tool's words for its result (see the top of this file). */
function answerWithTools(
  response: ServerResponse,
  json: Record<string, unknown>,
  answer: { id: string; created: number; model: string; promptTokens: number },
): void {
  const messages = (Array.isArray(json.messages) ? json.messages : []) as Array<{ role?: string; content?: unknown }>;
  const last = messages[messages.length - 1];
  const tools = json.tools as Array<{ function: { name: string; parameters?: { required?: string[] } } }>;
  const forced = (json.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
  const tool = tools.find((candidate) => candidate.function.name === forced) ?? tools[0];
  const said =
    last?.role === 'tool' ? `the tool said: ${typeof last.content === 'string' ? last.content : JSON.stringify(last.content)}` : undefined;
  const question = [...messages].reverse().find((message) => message.role === 'user');
  const args = Object.fromEntries(
    (tool.function.parameters?.required ?? []).map((name) => [name, typeof question?.content === 'string' ? question.content : '']),
  );
  const call = {
    id: `call_emu${answer.created}`,
    type: 'function',
    function: { name: tool.function.name, arguments: JSON.stringify(args) },
  };
  const completionTokens = said ? countWords(said) : 1 + Object.keys(args).length;
  const usage = {
    prompt_tokens: answer.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: answer.promptTokens + completionTokens,
  };
  const finish = said ? 'stop' : 'tool_calls';
  const base = { id: answer.id, created: answer.created, model: answer.model };
  if (json.stream !== true) {
    const message = said ? { role: 'assistant', content: said } : { role: 'assistant', content: null, tool_calls: [call] };
    return sendJson(response, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const frame = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(frame({ role: 'assistant', content: said ? '' : null }));
  if (said) response.write(frame({ content: said }));
  else {
    // the arguments in two pieces, as OpenAI streams them
    const half = Math.floor(call.function.arguments.length / 2);
    response.write(
      frame({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }),
    );
    response.write(frame({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments.slice(0, half) } }] }));
    response.write(frame({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments.slice(half) } }] }));
  }
  response.write(frame({}, finish));
  if ((json.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true) {
    response.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
  }
  response.end('data: [DONE]\n\n');
}

export async function startOpenAIEmulator(options: EmulatorOptions = {}): Promise<OpenAIEmulator> {
  const record = options.record ?? true;
  const state = { requests: [] as RecordedRequest[], abortedRequests: 0 };
  let created = 1_700_000_000;
  let baseUrl = '';
  const batches = createBatchEmulator(() => baseUrl);
  const held = new Set<() => void>();
  /** Until releaseHeld() or the client leaves. */
  const holdOpen = (response: ServerResponse) =>
    new Promise<void>((release) => {
      const done = () => {
        held.delete(done);
        response.off('close', done);
        release();
      };
      held.add(done);
      response.once('close', done);
    });

  const server: Server = createServer(
    (request, response) =>
      void (async () => {
        const chunks: Buffer[] = [];
        try {
          for await (const chunk of request) chunks.push(chunk as Buffer);
        } catch {
          // the client gave up halfway through its body (an upload whose source failed): nothing to answer
          return;
        }
        const rawBody = Buffer.concat(chunks);
        const [fullPath, query = ''] = (request.url ?? '/').split('?');
        // vendors that speak OpenAI's wire under another prefix (Groq /openai/v1, Zhipu /api/paas/v4, Azure
        // /openai/deployments/<name>) are answered as /v1; the recorded path stays the one asked for
        // (except under /nope/, which stays an unknown URL: a 404, the request's own fault)
        const path =
          OPERATION_PATH.test(fullPath) && !fullPath.startsWith('/v1/') && !fullPath.startsWith('/nope/')
            ? `/v1/${OPERATION_PATH.exec(fullPath)![1]}`
            : fullPath;
        const contentType = request.headers['content-type'] ?? '';
        let body: unknown = rawBody.toString('utf8');
        if (contentType.includes('application/json') && rawBody.length > 0) {
          try {
            body = JSON.parse(rawBody.toString('utf8'));
          } catch {
            return sendError(response, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
          }
        }
        if (record)
          state.requests.push({ method: request.method ?? 'GET', path: fullPath, headers: request.headers, body, rawBody, query });

        // Bearer, or Azure's api-key header, or x-api-key
        const key =
          (request.headers.authorization ?? '').replace(/^Bearer /, '') ||
          String(request.headers['api-key'] ?? request.headers['x-api-key'] ?? '');
        const failure = keyFailures[key];
        if (failure) return failure(response);
        if (key === 'sk-slow') await sleep(SLOW_KEY_DELAY_MS);
        if (key === 'sk-hang') return void request.socket.once('close', () => response.destroy());
        const batchRequest = { method: request.method ?? 'GET', path: fullPath, query, headers: request.headers, rawBody, key };
        if (await batches.handle(batchRequest, response)) return;

        const json = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
        const model = typeof json.model === 'string' ? json.model : 'gpt-3.5-turbo';
        const withUsage = request.headers['x-emulator-no-usage'] !== '1' && key !== 'sk-no-usage';
        const promptTokens = countWords(promptText(json));
        created += 1;

        if (request.method === 'GET' && path === '/v1/models') {
          return sendJson(response, 200, {
            object: 'list',
            data: ['gpt-3.5-turbo', 'gpt-4', 'text-embedding-ada-002'].map((id) => ({
              id,
              object: 'model',
              created: 1_686_935_002,
              owned_by: 'openai',
            })),
          });
        }
        if (request.method === 'GET' && Object.hasOwn(BILLING_ANSWERS, path)) return sendJson(response, 200, BILLING_ANSWERS[path]);
        if (request.method !== 'POST')
          return sendError(response, 404, `Invalid URL (${request.method} ${path})`, 'invalid_request_error', null);

        if (path === '/v1/chat/completions' || path === '/v1/completions') {
          const isChat = path === '/v1/chat/completions';
          const shape = (json.emulator ?? {}) as {
            chunks?: number;
            delay_ms?: number;
            respect_max_tokens?: boolean;
            cached_tokens?: number;
            reasoning_tokens?: number;
            hold?: boolean;
          };
          const limit = Number(json.max_tokens ?? json.max_completion_tokens ?? 0) || Infinity;
          const respectLimit = shape.respect_max_tokens === true || request.headers['x-emulator-respect-max-tokens'] === '1';
          const chunkCount = Math.min(
            Number(request.headers['x-emulator-chunks'] ?? shape.chunks ?? options.chunks ?? 5),
            respectLimit ? limit : Infinity,
          );
          const delayMs = Number(request.headers['x-emulator-delay-ms'] ?? shape.delay_ms ?? options.delayMs ?? 0);
          const words = Array.from({ length: chunkCount }, (_, index) => `word${index}`);
          const reasoningTokens = Math.max(0, Number(shape.reasoning_tokens ?? 0) || 0);
          const cachedTokens = Math.min(promptTokens, Math.max(0, Number(shape.cached_tokens ?? 0) || 0));
          const messages = Array.isArray(json.messages) ? (json.messages as Array<{ role?: unknown; content?: unknown }>) : [];
          const tool = isChat ? calledTool(chatTools(json.tools), json.tool_choice, messages.at(-1)) : undefined;
          const call = tool
            ? {
                id: `call_emu${created}_0`,
                type: 'function',
                function: { name: tool.name, arguments: toolArguments(tool, contentText(messages.at(-1)!.content)) },
              }
            : undefined;
          const completionTokens = (call ? countWords(call.function.arguments) : words.length) + reasoningTokens;
          const usage = {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
            ...(cachedTokens > 0 ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
            ...(reasoningTokens > 0 ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
          };
          const id = `${isChat ? 'chatcmpl' : 'cmpl'}-emu${created}`;
          const object = isChat ? 'chat.completion' : 'text_completion';
          if (isChat && key === 'sk-tools' && Array.isArray(json.tools) && json.tools.length > 0)
            return answerWithTools(response, json, { id, created, model, promptTokens });

          if (json.stream === true) {
            const includeUsage = (json.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
            response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
            const left = watchAbort(response, state);
            const frame = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
              `data: ${JSON.stringify({ id, object: isChat ? 'chat.completion.chunk' : 'text_completion', created, model, choices: [choice], ...extra })}\n\n`;
            if (call) {
              // the call's name first, then its arguments in two pieces, as OpenAI streams one
              const half = Math.ceil(call.function.arguments.length / 2);
              response.write(
                frame({
                  index: 0,
                  delta: {
                    role: 'assistant',
                    content: null,
                    tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
                  },
                  finish_reason: null,
                }),
              );
              for (const piece of [call.function.arguments.slice(0, half), call.function.arguments.slice(half)]) {
                if (delayMs > 0) await sleep(delayMs);
                if (left()) return;
                response.write(
                  frame({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }),
                );
              }
            } else if (isChat) response.write(frame({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }));
            if (shape.hold === true) await holdOpen(response);
            for (let index = 0; index < (call ? 0 : words.length); index += 1) {
              if (delayMs > 0) await sleep(delayMs);
              if (left()) return;
              const text = (index === 0 ? '' : ' ') + words[index];
              response.write(
                isChat
                  ? frame({ index: 0, delta: { content: text }, finish_reason: null })
                  : frame({ index: 0, text, finish_reason: null }),
              );
            }
            response.write(
              isChat
                ? frame({ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop' })
                : frame({ index: 0, text: '', finish_reason: 'stop' }),
            );
            if (includeUsage && withUsage) {
              response.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
            }
            response.end('data: [DONE]\n\n');
            return;
          }
          const text = words.join(' ');
          const choice = call
            ? { index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }
            : isChat
              ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }
              : { index: 0, text, logprobs: null, finish_reason: 'stop' };
          return sendJson(response, 200, { id, object, created, model, choices: [choice], ...(withUsage ? { usage } : {}) });
        }
        if (path === '/v1/responses') return answerResponses(json, request.headers, options, response, state, created, withUsage);
        if (path === '/v1/embeddings') {
          const inputs = Array.isArray(json.input) ? json.input : [json.input];
          return sendJson(response, 200, {
            object: 'list',
            // as OpenAI does: float32 little-endian bytes in base64 when asked (the openai SDK asks by default)
            data: inputs.map((_, index) => ({
              object: 'embedding',
              index,
              embedding: json.encoding_format === 'base64' ? Buffer.from(new Float32Array(EMBEDDING).buffer).toString('base64') : EMBEDDING,
            })),
            model,
            usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
          });
        }
        if (path === '/v1/moderations') {
          return sendJson(response, 200, {
            id: `modr-emu${created}`,
            model: 'text-moderation-007',
            results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.0001 } }],
          });
        }
        if (path === '/v1/images/generations') {
          const count = typeof json.n === 'number' ? json.n : 1;
          return sendJson(response, 200, {
            created,
            data: Array.from({ length: count }, (_, index) => ({ url: `https://images.example/emu-${created}-${index}.png` })),
          });
        }
        if (path === '/v1/images/edits' || path === '/v1/images/variations')
          return answerImageForm(rawBody, contentType, response, created);
        if (path === '/v1/audio/transcriptions' || path === '/v1/audio/translations') {
          return sendJson(response, 200, { text: `received ${rawBody.length} bytes` });
        }
        if (path === '/v1/audio/speech') {
          const audio = Buffer.alloc(64, 1);
          response.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
          return response.end(audio);
        }
        if (path === '/v1/edits') {
          return sendJson(response, 200, {
            object: 'edit',
            created,
            choices: [{ index: 0, text: 'edited text' }],
            usage: { prompt_tokens: promptTokens, completion_tokens: 2, total_tokens: promptTokens + 2 },
          });
        }
        return sendError(response, 404, `Invalid URL (${request.method} ${path})`, 'invalid_request_error', null);
      })(),
  );

  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    batches: batches.emulator,
    get requests() {
      return state.requests;
    },
    get abortedRequests() {
      return state.abortedRequests;
    },
    get held() {
      return held.size;
    },
    releaseHeld() {
      const count = held.size;
      for (const release of [...held]) release();
      return count;
    },
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
