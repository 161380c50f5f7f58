// A loopback Baidu ERNIE (Qianfan wenxinworkshop): the OAuth token exchange,
// chat (whole and streamed word by word) and embeddings, in Baidu's own wire
// format. Access tokens are issued only for the good key and checked on every
// call; the dead key's exchange is refused with `invalid_client` as Baidu does.
// Errors come back in HTTP 200 bodies `{error_code, error_msg}`, like Baidu's.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

const GOOD_KEY = 'emulated-baidu-ak|emulated-baidu-sk';
const DEAD_KEY = 'revoked-baidu-ak|revoked-baidu-sk';

export const BAIDU_CHANNELS: EmulatedChannel[] = [
  {
    type: 15,
    key: GOOD_KEY,
    deadKey: DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'ERNIE-3.5-8K',
    embeddingModel: 'Embedding-V1',
  },
];

const CHAT_PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/';
const EMBEDDINGS_PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/';
/** The endpoints this emulator serves (Baidu's names for ERNIE models). */
const CHAT_ENDPOINTS = new Set([
  'completions',
  'completions_pro',
  'eb-instant',
  'ernie_speed',
  'ernie-lite-8k',
  'ernie-tiny-8k',
  'ernie-4.0-turbo-8k',
]);
const EMBEDDING_ENDPOINTS = new Set(['embedding-v1', 'bge_large_zh', 'bge_large_en', 'tao_8k']);

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** A deterministic 8-dimensional vector for a text. */
function vectorOf(text: string): number[] {
  const vector = Array.from({ length: 8 }, () => 0);
  for (let index = 0; index < text.length; index += 1) vector[index % 8] += (text.charCodeAt(index) % 97) / 97;
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

interface BaiduMessage {
  role?: string;
  content?: string;
}

/** The Baidu emulator, plus a switch a relay test can use to make Baidu forget the tokens it issued. */
export interface BaiduEmulator extends ProtocolEmulator {
  /** Every access token issued so far is refused from now on with error 111 (expired), as after its `expires_in`. */
  expireTokens(): void;
  /** How many token exchanges were answered with a token. */
  exchanges(): number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function startBaiduEmulator(): Promise<BaiduEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  const tokens = new Set<string>();
  const expired = new Set<string>();
  let issued = 0;
  let sequence = 0;

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  // Baidu reports errors with HTTP 200
  const baiduError = (response: ServerResponse, code: number, message: string) =>
    json(response, 200, { error_code: code, error_msg: message });

  function exchange(url: URL, response: ServerResponse): void {
    if (url.searchParams.get('grant_type') !== 'client_credentials') {
      json(response, 400, { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported' });
      return;
    }
    const key = `${url.searchParams.get('client_id') ?? ''}|${url.searchParams.get('client_secret') ?? ''}`;
    if (key !== GOOD_KEY) {
      json(response, 401, {
        error: 'invalid_client',
        error_description: key.startsWith(GOOD_KEY.split('|')[0] + '|') ? 'Client authentication failed' : 'unknown client id',
      });
      return;
    }
    sequence += 1;
    const token = `24.${sequence.toString(16).padStart(32, '0')}.2592000.${Math.floor(Date.now() / 1000)}.282335-emulator`;
    tokens.add(token);
    issued += 1;
    json(response, 200, {
      refresh_token: `25.${sequence}`,
      expires_in: 2592000,
      session_key: 'emulated',
      access_token: token,
      scope: 'public brain_all_scope wenxinworkshop_mgr',
      session_secret: 'emulated',
    });
  }

  async function chat(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    const messages = Array.isArray(body.messages) ? (body.messages as BaiduMessage[]) : [];
    if (messages.length === 0) return baiduError(response, 336003, 'the length of messages must be greater than 0');
    if (messages.length % 2 === 0) return baiduError(response, 336003, 'the length of messages must be an odd number');
    for (const [index, message] of messages.entries()) {
      const expected = index % 2 === 0 ? ['user', 'function'] : ['assistant'];
      if (!expected.includes(message.role ?? ''))
        return baiduError(
          response,
          336003,
          `the role of message with ${index % 2 === 0 ? 'even' : 'odd'} index in the messages must be ${expected.join(' or ')}`,
        );
    }
    const system = typeof body.system === 'string' ? body.system : '';
    const lastUser = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
    const answer = `Hello from Baidu, you said: ${lastUser}`;
    const promptTokens = words(system) + messages.reduce((total, message) => total + words(message.content ?? ''), 0);
    const completionTokens = words(answer);
    reported.push({ promptTokens, completionTokens, cachedPromptTokens: 0 });
    sequence += 1;
    const id = `as-emu${sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    if (body.stream !== true) {
      json(response, 200, {
        id,
        object: 'chat.completion',
        created,
        result: answer,
        is_truncated: false,
        need_clear_history: false,
        finish_reason: 'normal',
        usage,
      });
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/event-stream;charset=utf-8', 'Cache-Control': 'no-cache' });
    const pieces = answer.split(/(?<= )/);
    for (const [index, piece] of pieces.entries()) {
      // one event per turn of the event loop, so the words travel apart as Baidu's do
      if (index > 0) await nextTurn();
      if (response.destroyed) return;
      const last = index === pieces.length - 1;
      const event = {
        id,
        object: 'chat.completion',
        created,
        sentence_id: index,
        is_end: last,
        is_truncated: false,
        result: piece,
        need_clear_history: false,
        finish_reason: 'normal',
        usage: last ? usage : { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
      };
      response.write(`data: ${JSON.stringify(event)}\n\n`);
    }
    response.end();
  }

  function embeddings(body: Record<string, unknown>, response: ServerResponse): void {
    const input = Array.isArray(body.input) ? body.input.filter((item): item is string => typeof item === 'string') : [];
    if (input.length === 0) return baiduError(response, 336003, 'input is empty');
    const promptTokens = input.reduce((total, text) => total + words(text), 0);
    reported.push({ promptTokens, completionTokens: 0, cachedPromptTokens: 0 });
    sequence += 1;
    json(response, 200, {
      id: `as-emb${sequence}`,
      object: 'embedding_list',
      created: Math.floor(Date.now() / 1000),
      data: input.map((text, index) => ({ object: 'embedding', embedding: vectorOf(text), index })),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
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
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (request.method !== 'POST') return json(response, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
      if (url.pathname === '/oauth/2.0/token') return exchange(url, response);
      const isChat = url.pathname.startsWith(CHAT_PREFIX);
      const isEmbeddings = url.pathname.startsWith(EMBEDDINGS_PREFIX);
      if (!isChat && !isEmbeddings) return json(response, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
      const token = url.searchParams.get('access_token');
      if (token && expired.has(token)) return baiduError(response, 111, 'Access token expired');
      if (!token || !tokens.has(token)) return baiduError(response, 110, 'Access token invalid or no longer valid');
      if (text && body === undefined) return baiduError(response, 336002, 'Invalid JSON');
      const endpoint = url.pathname.slice((isChat ? CHAT_PREFIX : EMBEDDINGS_PREFIX).length);
      if (!(isChat ? CHAT_ENDPOINTS : EMBEDDING_ENDPOINTS).has(endpoint)) return baiduError(response, 3, 'Unsupported openapi method');
      const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
      if (isChat) await chat(record, response);
      else embeddings(record, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error_code: 1, error_msg: String(error) });
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    requests,
    reported,
    expireTokens() {
      for (const token of tokens) expired.add(token);
      tokens.clear();
    },
    exchanges: () => issued,
  };
}
