// A loopback upstream speaking Anthropic's Messages API exactly: POST
// /v1/messages answered whole or as the documented event stream, Anthropic's
// error objects, and usage as Anthropic reports it (input_tokens excluding
// the prompt-cache reads and writes, which have their own fields).
// Reference: https://docs.anthropic.com/en/api/messages,
// https://docs.anthropic.com/en/docs/build-with-claude/streaming,
// https://docs.anthropic.com/en/api/errors
//
// Conventions (all chosen per request, so one emulator serves many tests):
// - Keys (header `x-api-key`): ANTHROPIC_GOOD_KEY answers; `sk-ant-dead` →
//   401 authentication_error; `sk-ant-broke` → 400 invalid_request_error "Your
//   credit balance is too low..." (a dead account in words only);
//   `sk-ant-busy` → 529 overloaded_error; any other key → 401 like the dead one.
//   A missing `anthropic-version` header → 400, as the vendor does.
// - The request is checked as the API checks it: `max_tokens` required, roles
//   only user/assistant and alternating, first turn user, no empty text blocks,
//   every tool_result answering a tool_use of the turn before → 400
//   invalid_request_error otherwise (so an encoding mistake shows). This is
//   the API's strict, documented form: the live API may now quietly combine
//   two turns of one role, but an adaptor must not count on it.
// - The answer is "Hello from Anthropic, you said: <last user text>" (or, when
//   the last user turn holds tool results, "Hello from Anthropic, the tool
//   said: <their text>"), streamed one word per text_delta, with a ping after
//   the first content_block_start.
// - Tools: when the request has tools, tool_choice is not `none`, and the last
//   user turn is text that names one of the tools (or tool_choice is `any` or
//   `tool`), the answer is one tool_use block for that tool (the named one,
//   else the first named in the text, else the first tool), stop_reason
//   `tool_use`. Its input holds each `required` property of the tool's schema:
//   strings get the user's text, numbers its word count, booleans true. Its id
//   is `toolu_emu<n>_0`. Streamed, the input arrives as input_json_delta
//   fragments (an empty one first, as the vendor does).
// - Usage: prompt tokens = words of the system prompt and of every text and
//   tool_result block (tool definitions and images count nothing); completion
//   tokens = words of the answer text, or of the tool input's JSON. A marker
//   `[cache_read:N]` / `[cache_creation:N]` anywhere in the prompt text (or the
//   headers `x-emulator-cache-read` / `x-emulator-cache-creation`) reports N of
//   the prompt tokens as read from / written to the prompt cache: they move
//   out of input_tokens into cache_read_input_tokens /
//   cache_creation_input_tokens, so the billed prompt stays the word count.
// - `max_tokens` below the answer's word count cuts it there (stop_reason
//   max_tokens); a stop sequence met in the answer cuts before it (stop_reason
//   stop_sequence, stop_sequence set).
// - `[stream_error]` in the last user text makes a stream send an `error` event
//   (overloaded_error) after the first word, with no message_delta.
// - Header `x-emulator-delay-ms` (or the start option `wordDelayMs`, for calls
//   through the gateway, which forwards no such header) waits that long before
//   each streamed word.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

export const ANTHROPIC_GOOD_KEY = 'sk-ant-api03-emulator';
export const ANTHROPIC_DEAD_KEY = 'sk-ant-dead';

export const ANTHROPIC_CHANNELS: EmulatedChannel[] = [
  {
    type: 14,
    key: ANTHROPIC_GOOD_KEY,
    deadKey: ANTHROPIC_DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'claude-3-5-haiku-20241022',
  },
];

/** What the emulator reported, with the cache-write figure Anthropic bills apart. */
export interface AnthropicReportedUsage extends ReportedUsage {
  cacheCreationTokens: number;
}

export interface AnthropicEmulator extends ProtocolEmulator {
  reported: AnthropicReportedUsage[];
}

type Block = Record<string, unknown> & { type?: string };
interface Turn {
  role?: string;
  content?: string | Block[];
}

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

function blocksOf(turn: Turn): Block[] {
  if (typeof turn.content === 'string') return [{ type: 'text', text: turn.content }];
  return Array.isArray(turn.content) ? turn.content : [];
}

function blockText(block: Block): string {
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  if (block.type === 'tool_result') {
    if (typeof block.content === 'string') return block.content;
    if (Array.isArray(block.content)) return (block.content as Block[]).map(blockText).join(' ');
  }
  return '';
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return (system as Block[]).map(blockText).join(' ');
  return '';
}

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': 'req_emulator',
  });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: 'error', error: { type, message }, request_id: 'req_emulator' });
}

/** The first thing wrong with a request, as the API would word it; undefined when it is well formed. */
function invalid(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  const turns = body.messages as Turn[];
  for (let index = 0; index < turns.length; index += 1) {
    const turn = turns[index];
    if (!turn || typeof turn !== 'object' || Array.isArray(turn)) return `messages.${index}: Input should be a valid dictionary`;
    if (turn.content === undefined || (typeof turn.content !== 'string' && !Array.isArray(turn.content)))
      return `messages.${index}.content: Input should be a valid list`;
    if (turn.role !== 'user' && turn.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (index === 0 && turn.role !== 'user') return 'messages: first message must use the "user" role';
    if (index > 0 && turns[index - 1].role === turn.role)
      return 'messages: roles must alternate between "user" and "assistant", but found multiple "' + turn.role + '" roles in a row';
    const blocks = blocksOf(turn);
    if (blocks.length === 0) return `messages.${index}: all messages must have non-empty content`;
    for (const block of blocks) {
      if (!block || typeof block !== 'object') return `messages.${index}.content: Input should be a valid dictionary`;
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text === ''))
        return `messages.${index}: text content blocks must be non-empty`;
      if (block.type === 'tool_result') {
        const previous = index > 0 ? blocksOf(turns[index - 1]) : [];
        if (!previous.some((used) => used.type === 'tool_use' && used.id === block.tool_use_id)) {
          return `messages.${index}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
      if (block.type === 'image') {
        const source = block.source as { type?: string; media_type?: string; data?: string; url?: string } | undefined;
        const ok =
          source?.type === 'base64'
            ? typeof source.media_type === 'string' && typeof source.data === 'string'
            : source?.type === 'url' && typeof source.url === 'string';
        if (!ok) return `messages.${index}: invalid image source`;
      }
    }
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return 'system: Input should be a valid string';
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    const index = (body.tools as unknown[]).findIndex(
      (tool) => !tool || typeof tool !== 'object' || typeof (tool as { name?: unknown }).name !== 'string',
    );
    if (index !== -1) return `tools.${index}: Input should be a valid dictionary with a name`;
  }
  if (body.tool_choice !== undefined && (!body.tool_choice || typeof body.tool_choice !== 'object'))
    return 'tool_choice: Input should be a valid dictionary';
  if (body.stop_sequences !== undefined && !Array.isArray(body.stop_sequences)) return 'stop_sequences: Input should be a valid list';
  return undefined;
}

interface Tool {
  name: string;
  input_schema?: { properties?: Record<string, { type?: string }>; required?: string[] };
}

function toolInput(tool: Tool, text: string): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const name of tool.input_schema?.required ?? []) {
    const kind = tool.input_schema?.properties?.[name]?.type;
    input[name] = kind === 'number' || kind === 'integer' ? words(text).length : kind === 'boolean' ? true : text;
  }
  return input;
}

/** The tool to call, when the request asks for one under the conventions above. */
function chosenTool(body: Record<string, unknown>, lastText: string): Tool | undefined {
  const tools = (Array.isArray(body.tools) ? body.tools : []) as Tool[];
  if (tools.length === 0) return undefined;
  const choice = (body.tool_choice ?? { type: 'auto' }) as { type?: string; name?: string };
  if (choice.type === 'none') return undefined;
  if (choice.type === 'tool') return tools.find((tool) => tool.name === choice.name);
  const named = tools.find((tool) => lastText.includes(tool.name));
  if (named) return named;
  return choice.type === 'any' ? tools[0] : undefined;
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

function marker(text: string, name: string, header: string | string[] | undefined): number {
  const fromHeader = Number(Array.isArray(header) ? header[0] : header);
  if (Number.isFinite(fromHeader) && fromHeader > 0) return Math.floor(fromHeader);
  const match = new RegExp(`\\[${name}:(\\d+)\\]`).exec(text);
  return match ? Number(match[1]) : 0;
}

export interface AnthropicEmulatorOptions {
  /**
   * Keep every request and reported usage (the default). The benchmark turns
   * it off, as a record growing by hundreds of thousands slows the emulator.
   */
  record?: boolean;
  /** Milliseconds before each streamed word when the request sets no `x-emulator-delay-ms`. */
  wordDelayMs?: number;
}

export async function startAnthropicEmulator(options: AnthropicEmulatorOptions = {}): Promise<AnthropicEmulator> {
  const record = options.record ?? true;
  const requests: EmulatedRequest[] = [];
  const reported: AnthropicReportedUsage[] = [];
  let serial = 0;

  const server: Server = createServer(
    (request: IncomingMessage, response: ServerResponse) =>
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = raw ? JSON.parse(raw) : undefined;
        } catch {
          if (record) requests.push({ method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body: raw });
          return sendError(
            response,
            400,
            'invalid_request_error',
            'There was an issue with the format of your request: the body is not valid JSON',
          );
        }
        if (record) requests.push({ method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body });

        const path = (request.url ?? '/').split('?')[0];
        if (request.method !== 'POST' || path !== '/v1/messages') return sendError(response, 404, 'not_found_error', 'Not found');

        const key = request.headers['x-api-key'];
        if (!key) return sendError(response, 401, 'authentication_error', 'x-api-key header is required');
        if (key === 'sk-ant-broke') {
          return sendError(
            response,
            400,
            'invalid_request_error',
            'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
          );
        }
        if (key === 'sk-ant-busy') return sendError(response, 529, 'overloaded_error', 'Overloaded');
        if (key !== ANTHROPIC_GOOD_KEY) return sendError(response, 401, 'authentication_error', 'invalid x-api-key');
        if (!request.headers['anthropic-version'])
          return sendError(response, 400, 'invalid_request_error', 'anthropic-version: header is required');

        const json = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
        const problem = invalid(json);
        if (problem) return sendError(response, 400, 'invalid_request_error', problem);

        const turns = json.messages as Turn[];
        const promptText = [systemText(json.system), ...turns.flatMap((turn) => blocksOf(turn).map(blockText))].join(' ');
        const promptTokens = Math.max(1, words(promptText).length);
        const cacheRead = Math.min(promptTokens, marker(promptText, 'cache_read', request.headers['x-emulator-cache-read']));
        const cacheCreation = Math.min(
          promptTokens - cacheRead,
          marker(promptText, 'cache_creation', request.headers['x-emulator-cache-creation']),
        );
        const prompt = {
          input_tokens: promptTokens - cacheRead - cacheCreation,
          cache_creation_input_tokens: cacheCreation,
          cache_read_input_tokens: cacheRead,
        };

        const last = turns[turns.length - 1];
        const lastBlocks = last.role === 'user' ? blocksOf(last) : [];
        const toolResults = lastBlocks.filter((block) => block.type === 'tool_result');
        const lastText = lastBlocks
          .filter((block) => block.type === 'text')
          .map(blockText)
          .join(' ');
        const tool = toolResults.length === 0 ? chosenTool(json, lastText) : undefined;

        serial += 1;
        const id = `msg_emu${String(serial).padStart(4, '0')}`;
        const model = json.model as string;
        const maxTokens = json.max_tokens as number;

        let answerWords: string[] = [];
        let stopReason = 'end_turn';
        let stopSequence: string | null = null;
        let input: Record<string, unknown> | undefined;
        let completionTokens: number;
        if (tool) {
          input = toolInput(tool, lastText);
          stopReason = 'tool_use';
          completionTokens = Math.max(1, words(JSON.stringify(input)).length);
        } else {
          let text =
            toolResults.length > 0
              ? `Hello from Anthropic, the tool said: ${toolResults.map(blockText).join(' ')}`
              : `Hello from Anthropic, you said: ${lastText}`;
          for (const stop of (json.stop_sequences ?? []) as string[]) {
            const at = typeof stop === 'string' && stop !== '' ? text.indexOf(stop) : -1;
            if (at !== -1) {
              text = text.slice(0, at);
              stopReason = 'stop_sequence';
              stopSequence = stop;
            }
          }
          answerWords = words(text);
          if (answerWords.length > maxTokens) {
            answerWords = answerWords.slice(0, maxTokens);
            stopReason = 'max_tokens';
            stopSequence = null;
          }
          completionTokens = answerWords.length;
        }
        const usage = { ...prompt, output_tokens: completionTokens };
        const report: AnthropicReportedUsage = {
          promptTokens,
          completionTokens,
          cachedPromptTokens: cacheRead,
          cacheCreationTokens: cacheCreation,
        };
        const toolId = `toolu_emu${serial}_0`;

        if (json.stream !== true) {
          if (record) reported.push(report);
          const content = tool
            ? [{ type: 'tool_use', id: toolId, name: tool.name, input }]
            : [{ type: 'text', text: answerWords.join(' ') }];
          return sendJson(response, 200, {
            id,
            type: 'message',
            role: 'assistant',
            model,
            content,
            stop_reason: stopReason,
            stop_sequence: stopSequence,
            usage,
          });
        }

        const delayMs = Number(request.headers['x-emulator-delay-ms'] ?? options.wordDelayMs ?? 0) || 0;
        response.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          'request-id': 'req_emulator',
        });
        let gone = false;
        response.on('close', () => {
          gone = !response.writableFinished;
        });
        const send = (event: Record<string, unknown> & { type: string }) =>
          response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

        send({
          type: 'message_start',
          message: {
            id,
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...prompt, output_tokens: 1 },
          },
        });
        if (tool) {
          send({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: toolId, name: tool.name, input: {} } });
          send({ type: 'ping' });
          const whole = JSON.stringify(input);
          const fragments = [
            '',
            ...Array.from({ length: Math.ceil(whole.length / 12) }, (_, index) => whole.slice(index * 12, index * 12 + 12)),
          ];
          for (const fragment of fragments) {
            if (delayMs > 0) await sleep(delayMs);
            if (gone) return;
            send({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: fragment } });
          }
        } else {
          send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
          send({ type: 'ping' });
          for (let index = 0; index < answerWords.length; index += 1) {
            if (delayMs > 0) await sleep(delayMs);
            if (gone) return;
            send({
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: (index === 0 ? '' : ' ') + answerWords[index] },
            });
            if (index === 0 && lastText.includes('[stream_error]')) {
              send({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
              return void response.end();
            }
          }
        }
        send({ type: 'content_block_stop', index: 0 });
        send({
          type: 'message_delta',
          delta: { stop_reason: stopReason, stop_sequence: stopSequence },
          usage: { output_tokens: completionTokens },
        });
        send({ type: 'message_stop' });
        if (record) reported.push(report);
        response.end();
      })(),
  );

  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    requests,
    reported,
  };
}
