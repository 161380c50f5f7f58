// A loopback Zhipu BigModel upstream speaking both of its protocols:
// - v4 (https://open.bigmodel.cn/dev/api): OpenAI-shaped chat and
//   embeddings under /api/paas/v4, the key as a Bearer token, errors as
//   `{error: {code, message}}` with Zhipu's business codes;
// - v3: /api/paas/v3/model-api/<model>/invoke and /sse-invoke, authorised by an
//   HS256 JWT (`sign_type: SIGN`, times in ms) verified against the key's
//   secret, answers in `{code, msg, success, data}` with the content
//   JSON-quoted, streams as `event:add` raw-text events and an `event:finish`
//   with a `meta:` line carrying the usage.
// It answers "Hello from Zhipu, you said: <last user text>", word by word when
// streaming, and counts one token per word.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { jsonText } from '../jsonText';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

/** Keys the emulator knows: id → secret, and whether the account is in arrears (code 1113). */
const ACCOUNTS: Record<string, { secret: string; broke: boolean }> = {
  'zhipu-good-id': { secret: 'zhipu-good-secret', broke: false },
  'zhipu-broke-id': { secret: 'zhipu-broke-secret', broke: true },
};

export const ZHIPU_CHANNELS: EmulatedChannel[] = [
  {
    type: 16,
    key: 'zhipu-good-id.zhipu-good-secret',
    deadKey: 'zhipu-broke-id.zhipu-broke-secret',
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'glm-4-flash',
    embeddingModel: 'embedding-3',
  },
  {
    type: 16,
    key: 'zhipu-good-id.zhipu-good-secret',
    deadKey: 'zhipu-broke-id.zhipu-broke-secret',
    baseUrl: (emulator) => emulator.baseUrl,
    other: 'v3',
    chatModel: 'chatglm_std',
  },
];

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '',
      )
      .join(' ');
  return '';
}

interface Turn {
  role: string;
  content: unknown;
}

/** The answer and its usage for a conversation. */
function answerFor(turns: Turn[]): { text: string; pieces: string[]; promptTokens: number; completionTokens: number } {
  const lastUser = [...turns].reverse().find((turn) => turn.role === 'user');
  const text = `Hello from Zhipu, you said: ${messageText(lastUser?.content)}`;
  const split = words(text);
  return {
    text,
    pieces: split.map((word, index) => (index === 0 ? word : ` ${word}`)),
    promptTokens: turns.reduce((sum, turn) => sum + words(messageText(turn.content)).length, 0),
    completionTokens: split.length,
  };
}

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** Who a v3 JWT speaks for, or the v3 error code that refuses it. */
function verifyJwt(token: string): { id: string } | { code: number; msg: string } {
  const invalid = { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
  const parts = token.split('.');
  if (parts.length !== 3) return invalid;
  const [head, claims, signature] = parts;
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString()) as Record<string, unknown>;
    payload = JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, unknown>;
  } catch {
    return invalid;
  }
  const account = ACCOUNTS[String(payload.api_key)];
  if (header.alg !== 'HS256' || header.sign_type !== 'SIGN' || !account) return invalid;
  const expected = createHmac('sha256', account.secret).update(`${head}.${claims}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { code: 1004, msg: '通过Authentication Token的验证失败' };
  // times in milliseconds: a token made with seconds would look expired since 1970
  if (typeof payload.exp !== 'number' || payload.exp < Date.now()) return { code: 1003, msg: 'Authorization Token已过期，请重新生成/获取' };
  if (typeof payload.timestamp !== 'number' || Math.abs(payload.timestamp - Date.now()) > 5 * 60_000)
    return { code: 1003, msg: 'Authorization Token已过期，请重新生成/获取' };
  return { id: String(payload.api_key) };
}

export async function startZhipuEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let serial = 0;
  const nextId = () => `2026112316${String(++serial).padStart(4, '0')}8f3a2c1d9e7b6a5c`;

  const report = (promptTokens: number, completionTokens: number) =>
    reported.push({ promptTokens, completionTokens, cachedPromptTokens: 0 });

  /** v4's key check: the id.secret key as Bearer. */
  function v4Refusal(request: IncomingMessage, response: ServerResponse): boolean {
    const auth = String(request.headers.authorization ?? '');
    if (!auth) {
      sendJson(response, 401, { error: { code: '1001', message: 'Header中未收到Authorization参数，无法进行身份验证。' } });
      return true;
    }
    const [id, secret] = auth.replace(/^Bearer\s+/i, '').split('.');
    const account = ACCOUNTS[id];
    if (!account || account.secret !== secret) {
      sendJson(response, 401, { error: { code: '1002', message: 'Authorization Token非法，请确认Authorization Token正确传递。' } });
      return true;
    }
    if (account.broke) {
      sendJson(response, 429, { error: { code: '1113', message: '余额不足或无可用资源包,请充值。' } });
      return true;
    }
    return false;
  }

  function v4Chat(body: Record<string, unknown>, response: ServerResponse): void {
    const turns = Array.isArray(body.messages) ? (body.messages as Turn[]) : [];
    if (turns.length === 0) {
      sendJson(response, 400, { error: { code: '1214', message: 'messages 参数非法。请检查文档。' } });
      return;
    }
    const model = jsonText(body.model ?? '');
    const answer = answerFor(turns);
    const id = nextId();
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: answer.promptTokens,
      completion_tokens: answer.completionTokens,
      total_tokens: answer.promptTokens + answer.completionTokens,
    };
    report(answer.promptTokens, answer.completionTokens);
    if (body.stream !== true) {
      sendJson(response, 200, {
        created,
        id,
        model,
        request_id: id,
        choices: [{ finish_reason: 'stop', index: 0, message: { content: answer.text, role: 'assistant' } }],
        usage,
      });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const piece of answer.pieces) {
      response.write(
        `data: ${JSON.stringify({ id, created, model, choices: [{ index: 0, delta: { role: 'assistant', content: piece } }] })}\n\n`,
      );
    }
    response.write(
      `data: ${JSON.stringify({ id, created, model, choices: [{ index: 0, finish_reason: 'stop', delta: { role: 'assistant', content: '' } }], usage })}\n\n`,
    );
    response.end('data: [DONE]\n\n');
  }

  function v4Embeddings(body: Record<string, unknown>, response: ServerResponse): void {
    const inputs =
      typeof body.input === 'string'
        ? [body.input]
        : Array.isArray(body.input)
          ? body.input.filter((item): item is string => typeof item === 'string')
          : [];
    if (inputs.length === 0) {
      sendJson(response, 400, { error: { code: '1214', message: 'input 参数非法。请检查文档。' } });
      return;
    }
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
    const prompt = inputs.reduce((sum, input) => sum + words(input).length, 0);
    report(prompt, 0);
    sendJson(response, 200, {
      model: jsonText(body.model ?? ''),
      data: inputs.map((input, index) => ({
        embedding: Array.from({ length: dimensions }, (_, position) => Number(Math.sin(input.length + position + index).toFixed(6))),
        index,
        object: 'embedding',
      })),
      object: 'list',
      usage: { completion_tokens: 0, prompt_tokens: prompt, total_tokens: prompt },
    });
  }

  function v3(request: IncomingMessage, body: Record<string, unknown>, response: ServerResponse, method: string): void {
    const verdict = verifyJwt(String(request.headers.authorization ?? ''));
    if ('code' in verdict) {
      sendJson(response, 200, { code: verdict.code, msg: verdict.msg, success: false });
      return;
    }
    if (ACCOUNTS[verdict.id].broke) {
      sendJson(response, 200, { code: 1113, msg: '您的账户已欠费，请充值后重试', success: false });
      return;
    }
    const turns = Array.isArray(body.prompt) ? (body.prompt as Turn[]) : [];
    if (turns.length === 0) {
      sendJson(response, 200, { code: 1214, msg: 'prompt 参数非法。请检查文档。', success: false });
      return;
    }
    const answer = answerFor(turns);
    const taskId = nextId();
    const usage = {
      prompt_tokens: answer.promptTokens,
      completion_tokens: answer.completionTokens,
      total_tokens: answer.promptTokens + answer.completionTokens,
    };
    report(answer.promptTokens, answer.completionTokens);
    if (method === 'invoke') {
      sendJson(response, 200, {
        code: 200,
        msg: '操作成功',
        data: {
          request_id: taskId,
          task_id: taskId,
          task_status: 'SUCCESS',
          choices: [{ role: 'assistant', content: JSON.stringify(answer.text) }],
          usage,
        },
        success: true,
      });
      return;
    }
    const incremental = body.incremental !== false;
    response.writeHead(200, { 'content-type': 'text/event-stream;charset=UTF-8', 'cache-control': 'no-cache' });
    let sofar = '';
    for (const piece of answer.pieces) {
      sofar += piece;
      const data = (incremental ? piece : sofar)
        .split('\n')
        .map((line) => `data:${line}`)
        .join('\n');
      response.write(`event:add\nid:${taskId}\n${data}\n\n`);
    }
    const meta = { task_status: 'SUCCESS', usage, task_id: taskId, request_id: taskId };
    response.end(`event:finish\nid:${taskId}\ndata:\nmeta:${JSON.stringify(meta)}\n\n`);
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown>;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        sendJson(response, 400, { error: { code: '1210', message: 'API 调用参数有误，请检查文档。' } });
        return;
      }
      const url = request.url ?? '/';
      requests.push({ method: request.method ?? 'GET', url, headers: request.headers, body: raw ? body : undefined });
      const path = url.split('?')[0];
      const v3Match = /^\/api\/paas\/v3\/model-api\/([^/]+)\/(invoke|sse-invoke)$/.exec(path);
      if (request.method !== 'POST') sendJson(response, 405, { error: { code: '1222', message: 'API 不存在' } });
      else if (v3Match) v3(request, body, response, v3Match[2]);
      else if (path === '/api/paas/v4/chat/completions') {
        if (!v4Refusal(request, response)) v4Chat(body, response);
      } else if (path === '/api/paas/v4/embeddings') {
        if (!v4Refusal(request, response)) v4Embeddings(body, response);
      } else sendJson(response, 404, { error: { code: '1222', message: `API ${path} 不存在` } });
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    requests,
    reported,
  };
}
