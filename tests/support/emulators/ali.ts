// A loopback Alibaba DashScope: native text generation (whole, and streamed
// word by word as SSE when `X-DashScope-SSE: enable`, incremental or
// cumulative as `parameters.incremental_output` asks) and text embeddings,
// in DashScope's wire format. Offered tools and a user turn last, it calls the
// first tool; after a tool result it answers "the tool said: ...". Errors are `{code, message, request_id}` with
// an HTTP status; the dead key gets DashScope's 401 InvalidApiKey.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

const GOOD_KEY = 'sk-emulated-dashscope-key';
const DEAD_KEY = 'sk-revoked-dashscope-key';

export const ALI_CHANNELS: EmulatedChannel[] = [
  {
    type: 17,
    key: GOOD_KEY,
    deadKey: DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'qwen-plus',
    embeddingModel: 'text-embedding-v3',
  },
];

const TEXT_PATH = '/api/v1/services/aigc/text-generation/generation';
const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding';
const CHAT_MODELS = new Set(['qwen-plus', 'qwen-max', 'qwen-turbo', 'qwen-long', 'qwen3-max']);
const EMBEDDING_MODELS = new Set(['text-embedding-v1', 'text-embedding-v2', 'text-embedding-v3', 'text-embedding-v4']);

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** The text of a DashScope message's content: a string, or the text items of a list. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((item) =>
      item && typeof item === 'object' && typeof (item as { text?: unknown }).text === 'string' ? (item as { text: string }).text : '',
    )
    .join(' ');
}

function vectorOf(text: string, dimension: number): number[] {
  const vector = Array.from({ length: dimension }, () => 0);
  for (let index = 0; index < text.length; index += 1) vector[index % dimension] += (text.charCodeAt(index) % 89) / 89;
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function startAliEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let sequence = 0;
  const requestId = () => {
    sequence += 1;
    return `emulated-${sequence.toString(16).padStart(8, '0')}-9d39-b238-d1ad38c9b6a9`;
  };

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const refuse = (response: ServerResponse, status: number, code: string, message: string) =>
    json(response, status, { code, message, request_id: requestId() });

  async function chat(body: Record<string, unknown>, streaming: boolean, response: ServerResponse): Promise<void> {
    const model = typeof body.model === 'string' ? body.model : '';
    if (!model) return refuse(response, 400, 'InvalidParameter', 'Model not specified.');
    if (!CHAT_MODELS.has(model)) return refuse(response, 400, 'InvalidParameter', 'Model not exist.');
    const input = (body.input ?? {}) as { messages?: Array<{ role?: string; content?: unknown }> };
    const messages = Array.isArray(input.messages) ? input.messages : [];
    if (messages.length === 0) return refuse(response, 400, 'InvalidParameter', 'Input messages must not be empty');
    const parameters = (body.parameters ?? {}) as Record<string, unknown>;
    const lastUser = [...messages].reverse().find((message) => message.role === 'user');
    const promptTokens = messages.reduce((total, message) => total + words(textOf(message.content)), 0);
    const id = requestId();
    const tools = Array.isArray(parameters.tools) ? (parameters.tools as Array<{ function?: { name?: string } }>) : [];
    const toolName = tools[0]?.function?.name;
    if (toolName && parameters.tool_choice !== 'none' && messages.at(-1)?.role === 'user') {
      return toolCall(toolName, textOf(lastUser?.content), promptTokens, id, streaming, response);
    }
    const lastTool = messages.at(-1)?.role === 'tool' ? textOf(messages.at(-1)?.content) : undefined;
    const answer =
      lastTool === undefined
        ? `Hello from DashScope, you said: ${textOf(lastUser?.content)}`
        : `Hello from DashScope, the tool said: ${lastTool}`;
    const completionTokens = words(answer);
    reported.push({ promptTokens, completionTokens, cachedPromptTokens: 0 });
    const asMessage = parameters.result_format === 'message';
    const output = (text: string, finish: string) =>
      asMessage ? { choices: [{ message: { role: 'assistant', content: text }, finish_reason: finish }] } : { text, finish_reason: finish };
    const usageFor = (completion: number) => ({
      total_tokens: promptTokens + completion,
      output_tokens: completion,
      input_tokens: promptTokens,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    if (!streaming) {
      json(response, 200, { output: output(answer, 'stop'), usage: usageFor(completionTokens), request_id: id });
      return;
    }
    const incremental = parameters.incremental_output === true;
    response.writeHead(200, {
      'Content-Type': 'text/event-stream;charset=UTF-8',
      'Cache-Control': 'no-cache',
      'X-DashScope-Request-Id': id,
    });
    const pieces = answer.split(/(?<= )/);
    let sent = '';
    let event = 0;
    const write = (data: unknown) => {
      event += 1;
      response.write(`id:${event}\nevent:result\n:HTTP_STATUS/200\ndata:${JSON.stringify(data)}\n\n`);
    };
    for (const piece of pieces) {
      // one event per turn of the event loop, so the words travel apart as DashScope's do
      if (sent) await nextTurn();
      if (response.destroyed) return;
      sent += piece;
      write({ output: output(incremental ? piece : sent, 'null'), usage: usageFor(words(sent)), request_id: id });
    }
    // DashScope closes with an empty increment (or the whole text) carrying the finish reason
    write({ output: output(incremental ? '' : sent, 'stop'), usage: usageFor(completionTokens), request_id: id });
    response.end();
  }

  /**
   * With tools offered and a user turn last, the model calls the first tool with `{"text": <the user's words>}`
   * (completion tokens = words of the arguments); streamed as DashScope does: id and name first, then the arguments.
   */
  async function toolCall(
    name: string,
    text: string,
    promptTokens: number,
    id: string,
    streaming: boolean,
    response: ServerResponse,
  ): Promise<void> {
    const argumentsText = JSON.stringify({ text });
    const completionTokens = words(argumentsText);
    reported.push({ promptTokens, completionTokens, cachedPromptTokens: 0 });
    const callId = `call_${id.replace(/-/g, '').slice(0, 24)}`;
    const usage = { total_tokens: promptTokens + completionTokens, output_tokens: completionTokens, input_tokens: promptTokens };
    if (!streaming) {
      json(response, 200, {
        output: {
          choices: [
            {
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: '',
                tool_calls: [{ function: { name, arguments: argumentsText }, index: 0, id: callId, type: 'function' }],
              },
            },
          ],
        },
        usage,
        request_id: id,
      });
      return;
    }
    response.writeHead(200, {
      'Content-Type': 'text/event-stream;charset=UTF-8',
      'Cache-Control': 'no-cache',
      'X-DashScope-Request-Id': id,
    });
    const half = Math.floor(argumentsText.length / 2);
    const steps = [
      {
        tool_calls: [{ index: 0, id: callId, type: 'function', function: { name, arguments: argumentsText.slice(0, half) } }],
        finish: 'null',
      },
      { tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: argumentsText.slice(half) } }], finish: 'null' },
      { tool_calls: undefined, finish: 'tool_calls' },
    ];
    for (const [index, step] of steps.entries()) {
      if (index > 0) await nextTurn();
      if (response.destroyed) return;
      const message = step.tool_calls
        ? { content: '', tool_calls: step.tool_calls, role: 'assistant' }
        : { content: '', role: 'assistant' };
      const data = { output: { choices: [{ message, finish_reason: step.finish }] }, usage, request_id: id };
      response.write(`id:${index + 1}\nevent:result\n:HTTP_STATUS/200\ndata:${JSON.stringify(data)}\n\n`);
    }
    response.end();
  }

  function embeddings(body: Record<string, unknown>, response: ServerResponse): void {
    const model = typeof body.model === 'string' ? body.model : '';
    if (!EMBEDDING_MODELS.has(model)) return refuse(response, 400, 'InvalidParameter', 'Model not exist.');
    const input = (body.input ?? {}) as { texts?: unknown };
    const texts = Array.isArray(input.texts) ? input.texts.filter((item): item is string => typeof item === 'string') : [];
    if (texts.length === 0) return refuse(response, 400, 'InvalidParameter', 'Input texts must not be empty');
    const parameters = (body.parameters ?? {}) as { dimension?: unknown };
    const dimension = typeof parameters.dimension === 'number' ? parameters.dimension : 8;
    const totalTokens = texts.reduce((total, text) => total + words(text), 0);
    reported.push({ promptTokens: totalTokens, completionTokens: 0, cachedPromptTokens: 0 });
    json(response, 200, {
      output: { embeddings: texts.map((text, index) => ({ embedding: vectorOf(text, dimension), text_index: index })) },
      usage: { total_tokens: totalTokens },
      request_id: requestId(),
    });
  }

  const server = createServer((request, response) => {
    void (async () => {
      const text = await readBody(request);
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (request.method !== 'POST' || (path !== TEXT_PATH && path !== EMBEDDINGS_PATH))
        return refuse(response, 404, 'InvalidURL', `Invalid URL provided in your request: ${path}`);
      const authorization = request.headers.authorization ?? '';
      if (authorization !== `Bearer ${GOOD_KEY}`) return refuse(response, 401, 'InvalidApiKey', 'Invalid API-key provided.');
      if (body === undefined || typeof body !== 'object' || body === null)
        return refuse(response, 400, 'InvalidParameter', 'The request body is not a JSON object.');
      const record = body as Record<string, unknown>;
      if (path === EMBEDDINGS_PATH) return embeddings(record, response);
      await chat(record, request.headers['x-dashscope-sse'] === 'enable', response);
    })().catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, 'InternalError', String(error));
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    requests,
    reported,
  };
}
