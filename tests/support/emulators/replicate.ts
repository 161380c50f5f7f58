// A loopback Replicate: predictions for one language model
// (POST /v1/models/meta/meta-llama-3-8b-instruct/predictions). With
// `Prefer: wait` it answers the finished prediction (201), its output a list
// of text pieces, one per word, and its metrics (input_token_count: one per
// word of prompt and system prompt; output_token_count: one per word
// answered); without it, the prediction just started, as Replicate does.
// Refusals are problem bodies (`{title, detail, status}`): 401 for the dead
// token, 422 for an input without a prompt, 404 for another model.
import { createServer, type ServerResponse } from 'node:http';
import { listenOnLoopback, readRequestBody, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

const GOOD_TOKEN = 'r8_emulatedReplicateToken0123456789';
const DEAD_TOKEN = 'r8_revokedReplicateToken0123456789';
const MODEL = 'meta/meta-llama-3-8b-instruct';

export const REPLICATE_CHANNELS: EmulatedChannel[] = [{ type: 46, key: GOOD_TOKEN, deadKey: DEAD_TOKEN, baseUrl: (emulator) => emulator.baseUrl, other: '', chatModel: MODEL }];

const words = (text: unknown): number => (typeof text === 'string' ? text.split(/\s+/).filter(Boolean).length : 0);

export async function startReplicateEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let sequence = 0;

  const problem = (response: ServerResponse, status: number, title: string, detail: string) => {
    response.writeHead(status, { 'Content-Type': 'application/problem+json' });
    response.end(JSON.stringify({ title, detail, status }));
  };

  function predict(baseUrl: string, body: Record<string, unknown>, wait: boolean, response: ServerResponse): void {
    const input = (body.input ?? {}) as Record<string, unknown>;
    if (typeof input.prompt !== 'string' || !input.prompt) return problem(response, 422, 'Input validation failed', '- input: prompt is required\n');
    sequence += 1;
    const id = `emulated${sequence.toString(36).padStart(18, '0')}`;
    const urls = { cancel: `${baseUrl}/v1/predictions/${id}/cancel`, get: `${baseUrl}/v1/predictions/${id}`, stream: `${baseUrl}/v1/files/stream-${id}` };
    const prediction = { id, model: MODEL, version: 'dp-emulated', input, logs: '', created_at: '2024-11-27T15:04:05.123Z', urls, data_removed: false };
    response.writeHead(201, { 'Content-Type': 'application/json' });
    if (!wait) {
      response.end(JSON.stringify({ ...prediction, output: null, error: null, status: 'starting' }));
      return;
    }
    const last =
      input.prompt
        .split('\n')
        .filter((line) => line && line !== 'assistant:')
        .at(-1) ?? '';
    const answer = `Hello from Replicate, you said: ${last.replace(/^user: /, '')}`;
    const inputTokens = words(input.prompt) + words(input.system_prompt);
    const outputTokens = words(answer);
    reported.push({ promptTokens: inputTokens, completionTokens: outputTokens, cachedPromptTokens: 0 });
    response.end(
      JSON.stringify({
        ...prediction,
        output: answer.split(/(?= )/),
        error: null,
        status: 'succeeded',
        metrics: { input_token_count: inputTokens, output_token_count: outputTokens, predict_time: 0.2, tokens_per_second: 40 },
      }),
    );
  }

  const server = createServer((request, response) => {
    void (async () => {
      const { text, body } = await readRequestBody(request);
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw: text });
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (request.headers.authorization !== `Bearer ${GOOD_TOKEN}`) return problem(response, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
      if (request.method !== 'POST' || path !== `/v1/models/${MODEL}/predictions`) return problem(response, 404, 'Not found', 'The requested resource could not be found.');
      if (!body || typeof body !== 'object') return problem(response, 400, 'Bad request', 'The body is not JSON.');
      predict(`http://${request.headers.host ?? '127.0.0.1'}`, body as Record<string, unknown>, /^wait\b/.test(String(request.headers.prefer ?? '')), response);
    })().catch((error: unknown) => {
      if (!response.headersSent) problem(response, 500, 'Internal error', String(error));
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported };
}
