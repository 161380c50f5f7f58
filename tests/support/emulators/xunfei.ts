// A loopback iFlytek Spark upstream: the WebSocket chat API of
// https://www.xfyun.cn/doc/spark/Web.html on an HTTP server at 127.0.0.1.
// The upgrade is refused as Spark's gateway refuses it: 401 `{"message":
// "HMAC signature cannot be verified"}` when the signed URL does not verify
// against the APIKey's APISecret, 403 when the `date` is more than five
// minutes off. An accepted socket takes one request frame and answers
// "Hello from Spark, you said: <last user text>" one word a frame (status 0,
// 1..., 2), the usage in the last frame, then closes. The dead key signs
// correctly but its app has no licence: it gets Spark's 11200 error frame.
// Its own table of paths and domains, independent of the adaptor's.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

/** APIKey → the app behind it. */
const ACCOUNTS: Record<string, { appId: string; secret: string; licensed: boolean }> = {
  '6f1e2d3c4b5a69788796a5b4c3d2e1f0': { appId: 'sb0a1b2c', secret: 'N2E5YjFjMmQzZTRmNWE2YjdjOGQ5ZTBm', licensed: true },
  '0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a': { appId: 'sb9z8y7x', secret: 'ZjBlOWQ4YzdiNmE1OTQ4MzcyNjE1MDRm', licensed: false },
};

/** Spark's URL paths and the domain each one serves. */
const DOMAINS: Record<string, string> = {
  '/v1.1/chat': 'lite',
  '/v2.1/chat': 'generalv2',
  '/v3.1/chat': 'generalv3',
  '/v3.5/chat': 'generalv3.5',
  '/v4.0/chat': '4.0Ultra',
  '/chat/pro-128k': 'pro-128k',
  '/chat/max-32k': 'max-32k',
};

export const XUNFEI_CHANNELS: EmulatedChannel[] = [
  {
    type: 18,
    key: 'sb0a1b2c|N2E5YjFjMmQzZTRmNWE2YjdjOGQ5ZTBm|6f1e2d3c4b5a69788796a5b4c3d2e1f0',
    deadKey: 'sb9z8y7x|ZjBlOWQ4YzdiNmE1OTQ4MzcyNjE1MDRm|0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a',
    baseUrl: (emulator) => emulator.baseUrl,
    other: 'v3.5',
    chatModel: 'generalv3.5',
  },
];

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The APIKey a signed upgrade request proves, or the refusal Spark's gateway gives. */
function verify(request: IncomingMessage): { apiKey: string; path: string } | { status: number; reason: string; message: string } {
  const url = new URL(request.url ?? '/', 'http://emulator');
  const authorization = url.searchParams.get('authorization');
  const date = url.searchParams.get('date');
  const host = url.searchParams.get('host');
  if (!authorization || !date || !host) return { status: 401, reason: 'Unauthorized', message: 'Unauthorized' };
  const when = Date.parse(date);
  if (!date.endsWith('GMT') || Number.isNaN(when) || Math.abs(Date.now() - when) > 5 * 60_000) {
    return {
      status: 403,
      reason: 'Forbidden',
      message: 'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
    };
  }
  const fields = Object.fromEntries(
    [
      ...Buffer.from(authorization, 'base64')
        .toString('utf8')
        .matchAll(/([\w ]+?)="([^"]*)"/g),
    ].map((match) => [match[1].trim(), match[2]]),
  );
  const apiKey = fields.api_key ?? fields['hmac username'];
  const account = apiKey ? ACCOUNTS[apiKey] : undefined;
  const cannot = { status: 401, reason: 'Unauthorized', message: 'HMAC signature cannot be verified' };
  if (!account || fields.algorithm !== 'hmac-sha256' || fields.headers !== 'host date request-line' || !fields.signature) return cannot;
  // the host the client connected to is the one it must have signed
  if (host !== request.headers.host) return cannot;
  const expected = createHmac('sha256', account.secret).update(`host: ${host}\ndate: ${date}\nGET ${url.pathname} HTTP/1.1`).digest();
  const given = Buffer.from(fields.signature, 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return cannot;
  return { apiKey, path: url.pathname };
}

interface Frame {
  header?: { app_id?: unknown };
  parameter?: { chat?: { domain?: unknown } };
  payload?: { message?: { text?: Array<{ role?: unknown; content?: unknown }> } };
}

export async function startXunfeiEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let serial = 0;
  const sockets = new WebSocketServer({ noServer: true });

  function answer(socket: WebSocket, request: IncomingMessage, apiKey: string, path: string, data: string): void {
    const sid = `cht000${(++serial).toString(16).padStart(4, '0')}@dx18c7e4a9b2f0b8a${serial % 10}`;
    const fail = (code: number, message: string) => {
      socket.send(JSON.stringify({ header: { code, message, sid, status: 2 } }));
      socket.close(1000);
    };
    let frame: Frame;
    try {
      frame = JSON.parse(data) as Frame;
    } catch {
      requests.push({ method: 'GET', url: request.url ?? '/', headers: request.headers, body: data });
      fail(10003, 'InvalidParamError:(10003)message format is not JSON');
      return;
    }
    requests.push({ method: 'GET', url: request.url ?? '/', headers: request.headers, body: frame });
    const account = ACCOUNTS[apiKey];
    if (frame.header?.app_id !== account.appId) return fail(10016, 'AppIdNoAuthError:(10016)app_id does not match the api_key');
    if (!account.licensed) return fail(11200, 'AppIdNoAuthError:(11200)auth no license');
    if (frame.parameter?.chat?.domain !== DOMAINS[path])
      return fail(10005, `InvalidParamError:(10005)domain ${String(frame.parameter?.chat?.domain)} is not served at ${path}`);
    const turns = frame.payload?.message?.text ?? [];
    if (!Array.isArray(turns) || turns.length === 0) return fail(10005, 'InvalidParamError:(10005)payload.message.text is empty');
    const lastUser = [...turns].reverse().find((turn) => turn.role === 'user');
    const text = `Hello from Spark, you said: ${typeof lastUser?.content === 'string' ? lastUser.content : ''}`;
    const pieces = words(text).map((word, index) => (index === 0 ? word : ` ${word}`));
    const lastUserTokens = words(typeof lastUser?.content === 'string' ? lastUser.content : '').length;
    const promptTokens = turns.reduce((sum, turn) => sum + words(typeof turn.content === 'string' ? turn.content : '').length, 0);
    const completionTokens = pieces.length;
    reported.push({ promptTokens, completionTokens, cachedPromptTokens: 0 });
    pieces.forEach((piece, seq) => {
      const status = seq === pieces.length - 1 ? 2 : seq === 0 ? 0 : 1;
      const payload: Record<string, unknown> = { choices: { status, seq, text: [{ content: piece, role: 'assistant', index: 0 }] } };
      if (status === 2)
        payload.usage = {
          text: {
            question_tokens: lastUserTokens,
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          },
        };
      socket.send(JSON.stringify({ header: { code: 0, message: 'Success', sid, status }, payload }));
    });
    socket.close(1000);
  }

  const server = createServer((request, response) => {
    // Spark's chat is WebSocket only
    response.writeHead(426, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: 'Upgrade Required' }));
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const verdict = verify(request);
    if ('status' in verdict) {
      requests.push({ method: 'GET', url: request.url ?? '/', headers: request.headers, body: undefined });
      refuse(socket, verdict.status, verdict.reason, verdict.message);
      return;
    }
    if (!(verdict.path in DOMAINS)) {
      refuse(socket, 404, 'Not Found', 'no Route matched with those values');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      // ws's default binaryType, nodebuffer: each message is one Buffer
      ws.once('message', (data) => answer(ws, request, verdict.apiKey, verdict.path, (data as Buffer).toString()));
    });
  });
  const listening = await listenOnLoopback(server, () => {
    for (const client of sockets.clients) client.terminate();
    sockets.close();
  });
  return {
    ...listening,
    requests,
    reported,
  };
}
