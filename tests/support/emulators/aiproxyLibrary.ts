// A loopback AI Proxy library: POST /api/library/ask with a bearer key and
// `{model, query, libraryId, stream}`. It answers from one library
// ("lib-emulated"): whole as `{success, answer, model, documents}`, or
// streamed as `data: {content, model}` events word by word, then one with
// the documents and `finish: true`. Like the real one it reports no token
// usage. Refusals are `{success: false, errCode, errMsg}`: 401 for the dead key.
import { createServer, type ServerResponse } from 'node:http';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

const GOOD_KEY = 'ap-emulated-library-key';
const DEAD_KEY = 'ap-revoked-library-key';
const LIBRARY = 'lib-emulated';
const DOCUMENTS = [{ title: 'Guide', url: 'https://docs.example/guide' }];

export const AIPROXY_LIBRARY_CHANNELS: EmulatedChannel[] = [
  {
    type: 21,
    key: GOOD_KEY,
    deadKey: DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: LIBRARY,
    chatModel: 'gpt-4o-mini',
    unmetered: true,
  },
];

export async function startAiProxyLibraryEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const refuse = (response: ServerResponse, status: number, errCode: number, errMsg: string) =>
    json(response, status, { success: false, errCode, errMsg });

  const server = createServer((request, response) => {
    void (async () => {
      const { text, body } = await readRequestBody(request);
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw: text });
      if (request.method !== 'POST' || new URL(request.url ?? '/', 'http://127.0.0.1').pathname !== '/api/library/ask')
        return refuse(response, 404, 404, 'not found');
      if (request.headers.authorization !== `Bearer ${GOOD_KEY}`) return refuse(response, 401, 401, 'Invalid API Key');
      const fields = (body ?? {}) as { model?: unknown; query?: unknown; libraryId?: unknown; stream?: unknown };
      if (fields.libraryId !== LIBRARY) return refuse(response, 200, 1003, 'library not found');
      if (typeof fields.query !== 'string' || !fields.query) return refuse(response, 200, 1001, 'query is empty');
      const model = typeof fields.model === 'string' ? fields.model : '';
      const answer = `Hello from the library, you asked: ${fields.query}`;
      if (fields.stream !== true) return json(response, 200, { success: true, answer, model, documents: DOCUMENTS });
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for (const piece of answer.split(/(?<= )/)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (response.destroyed) return;
        response.write(`data: ${JSON.stringify({ content: piece, model })}\n\n`);
      }
      response.write(`data: ${JSON.stringify({ content: '', model, documents: DOCUMENTS, finish: true })}\n\n`);
      response.end();
    })().catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, 500, String(error));
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported };
}
