// A loopback Coze: the chat API v3 (POST /v3/chat) for one published bot,
// streamed as Coze streams it (conversation.chat.created / in_progress,
// conversation.message.delta word by word, conversation.message.completed,
// a follow_up suggestion, conversation.chat.completed with usage, done).
// A non-streamed chat is only created, as Coze does (the answer would have to
// be polled): a gateway that asks for one gets no answer text. Usage: one
// token per word of every message (input_count) and of the answer
// (output_count). Refusals are `{code, msg}` in an HTTP 200, as Coze answers
// them; the dead token gets code 4100.
import { createServer, type ServerResponse } from 'node:http';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

const GOOD_TOKEN = 'pat_emulatedCozeToken0123456789';
const DEAD_TOKEN = 'pat_revokedCozeToken0123456789';
export const COZE_BOT_ID = '7379462189365198898';

export const COZE_CHANNELS: EmulatedChannel[] = [
  { type: 34, key: GOOD_TOKEN, deadKey: DEAD_TOKEN, baseUrl: (emulator) => emulator.baseUrl, other: '', chatModel: `bot-${COZE_BOT_ID}` },
];

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface CozeMessage {
  role?: string;
  type?: string;
  content?: unknown;
  content_type?: string;
}

/** The words of a message: its text, or the text items of an object_string. */
function textOf(message: CozeMessage): string {
  if (typeof message.content !== 'string') return '';
  if (message.content_type !== 'object_string') return message.content;
  const items = JSON.parse(message.content) as Array<{ type?: string; text?: string }>;
  return items.map((item) => (item.type === 'text' ? (item.text ?? '') : '')).join(' ');
}

export async function startCozeEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let sequence = 7382159487131697000;
  const nextId = () => String((sequence += 1));

  const json = (response: ServerResponse, body: unknown) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const refuse = (response: ServerResponse, code: number, msg: string) => json(response, { code, msg });

  async function chat(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    if (body.bot_id !== COZE_BOT_ID)
      return refuse(response, 4200, `The bot ${String(body.bot_id)} does not exist or has not been published to the API.`);
    if (typeof body.user_id !== 'string' || !body.user_id) return refuse(response, 4000, 'The requested parameter user_id is invalid.');
    const messages = Array.isArray(body.additional_messages) ? (body.additional_messages as CozeMessage[]) : [];
    if (messages.length === 0 || messages.at(-1)?.role !== 'user')
      return refuse(response, 4000, 'The last of additional_messages must be a user question.');
    const chatId = nextId();
    const conversationId = nextId();
    const status = (state: string, usage = { token_count: 0, output_count: 0, input_count: 0 }) => ({
      id: chatId,
      conversation_id: conversationId,
      bot_id: COZE_BOT_ID,
      created_at: 1718792946,
      last_error: { code: 0, msg: '' },
      status: state,
      usage,
    });
    if (body.stream !== true) return json(response, { data: status('in_progress'), code: 0, msg: '' });
    const inputCount = messages.reduce((total, message) => total + words(textOf(message)), 0);
    const answer = `Hello from the Coze bot, you said: ${textOf(messages.at(-1)!)}`;
    const outputCount = words(answer);
    reported.push({ promptTokens: inputCount, completionTokens: outputCount, cachedPromptTokens: 0 });
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const write = (event: string, data: unknown) => response.write(`event:${event}\ndata:${JSON.stringify(data)}\n\n`);
    write('conversation.chat.created', status('created'));
    write('conversation.chat.in_progress', status('in_progress'));
    const messageId = nextId();
    const message = (type: string, content: string) => ({
      id: messageId,
      conversation_id: conversationId,
      bot_id: COZE_BOT_ID,
      chat_id: chatId,
      role: 'assistant',
      type,
      content,
      content_type: 'text',
    });
    for (const piece of answer.split(/(?<= )/)) {
      // one event per turn of the event loop, so the words travel apart
      await nextTurn();
      if (response.destroyed) return;
      write('conversation.message.delta', message('answer', piece));
    }
    write('conversation.message.completed', message('answer', answer));
    write('conversation.message.completed', message('follow_up', 'What else can you do?'));
    write('conversation.chat.completed', {
      ...status('completed', { token_count: inputCount + outputCount, output_count: outputCount, input_count: inputCount }),
      completed_at: 1718792949,
    });
    response.write('event:done\ndata:"[DONE]"\n\n');
    response.end();
  }

  const server = createServer((request, response) => {
    void (async () => {
      const { text, body } = await readRequestBody(request);
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw: text });
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (request.method !== 'POST' || path !== '/v3/chat') {
        response.writeHead(404, { 'Content-Type': 'application/json' });
        return response.end(JSON.stringify({ code: 4004, msg: `no route ${path}` }));
      }
      if (request.headers.authorization !== `Bearer ${GOOD_TOKEN}`) return refuse(response, 4100, 'authentication is invalid');
      if (!body || typeof body !== 'object') return refuse(response, 4000, 'The request body is not JSON.');
      await chat(body as Record<string, unknown>, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 5000, String(error));
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported };
}
