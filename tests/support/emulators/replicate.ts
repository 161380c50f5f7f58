// A loopback Replicate: predictions for one language model
// (POST /v1/models/meta/meta-llama-3-8b-instruct/predictions). With
// `Prefer: wait` it answers the finished prediction (201), its output a list
// of text pieces, one per word, and its metrics (input_token_count: one per
// word of prompt and system prompt; output_token_count: one per word
// answered). With `stream: true` it answers the prediction just started, its
// `urls.stream` an event stream (GET, Bearer token, `Accept:
// text/event-stream`) that sends one `output` event per piece with a pause
// between them, a `logs` event first, then `done` (`{}`); the prediction at
// `urls.get` is `processing` until then and `succeeded` with its metrics
// after. Refusals are problem bodies (`{title, detail, status}`): 401 for the
// dead token, 422 for an input without a prompt, 404 for another model.
//
// A prompt holding the word `cut` has its stream cut (the connection
// destroyed) after its third piece; one holding `nometrics` has its
// prediction answer 500 once the stream is done, so the relay cannot learn
// the counts. `streamUrl` (a test's option) names the stream elsewhere.
import { createServer, type ServerResponse } from 'node:http';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

const GOOD_TOKEN = 'r8_emulatedReplicateToken0123456789';
const DEAD_TOKEN = 'r8_revokedReplicateToken0123456789';
const MODEL = 'meta/meta-llama-3-8b-instruct';
/** Between two streamed pieces: long enough that a client sees them arrive apart. */
export const REPLICATE_PIECE_PAUSE_MS = 40;

export const REPLICATE_CHANNELS: EmulatedChannel[] = [
  { type: 46, key: GOOD_TOKEN, deadKey: DEAD_TOKEN, baseUrl: (emulator) => emulator.baseUrl, other: '', chatModel: MODEL },
];

const words = (text: unknown): number => (typeof text === 'string' ? text.split(/\s+/).filter(Boolean).length : 0);

export interface ReplicateEmulatorOptions {
  /** Where a streamed prediction says its stream is (the emulator's own URL when absent). */
  streamUrl?: (id: string, baseUrl: string) => string;
}

/** A prediction the emulator made, as it stands. */
interface Prediction {
  id: string;
  input: Record<string, unknown>;
  urls: { cancel: string; get: string; stream: string };
  pieces: string[];
  usage: ReportedUsage;
  status: 'starting' | 'processing' | 'succeeded' | 'failed';
  cut: boolean;
  noMetrics: boolean;
  streamed: boolean;
}

export async function startReplicateEmulator(options: ReplicateEmulatorOptions = {}): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  const predictions = new Map<string, Prediction>();
  let sequence = 0;

  const problem = (response: ServerResponse, status: number, title: string, detail: string) => {
    response.writeHead(status, { 'Content-Type': 'application/problem+json' });
    response.end(JSON.stringify({ title, detail, status }));
  };

  /** The prediction object as Replicate's API shows it. */
  function shown(prediction: Prediction): Record<string, unknown> {
    const { id, input, urls, pieces, usage, status } = prediction;
    const base = {
      id,
      model: MODEL,
      version: 'dp-emulated',
      input,
      logs: '',
      created_at: '2024-11-27T15:04:05.123Z',
      urls,
      data_removed: false,
      error: null,
      status,
    };
    if (status !== 'succeeded') return { ...base, output: status === 'starting' ? null : pieces };
    return {
      ...base,
      output: pieces,
      metrics: {
        input_token_count: usage.promptTokens,
        output_token_count: usage.completionTokens,
        predict_time: 0.2,
        tokens_per_second: 40,
      },
    };
  }

  function create(baseUrl: string, body: Record<string, unknown>, wait: boolean, response: ServerResponse): void {
    const input = (body.input ?? {}) as Record<string, unknown>;
    if (typeof input.prompt !== 'string' || !input.prompt)
      return problem(response, 422, 'Input validation failed', '- input: prompt is required\n');
    sequence += 1;
    const id = `emulated${sequence.toString(36).padStart(18, '0')}`;
    const last =
      input.prompt
        .split('\n')
        .filter((line) => line && line !== 'assistant:')
        .at(-1) ?? '';
    const answer = `Hello from Replicate, you said: ${last.replace(/^user: /, '')}`;
    const usage = {
      promptTokens: words(input.prompt) + words(input.system_prompt),
      completionTokens: words(answer),
      cachedPromptTokens: 0,
    };
    const streamed = body.stream === true;
    const prediction: Prediction = {
      id,
      input,
      urls: {
        cancel: `${baseUrl}/v1/predictions/${id}/cancel`,
        get: `${baseUrl}/v1/predictions/${id}`,
        stream: options.streamUrl?.(id, baseUrl) ?? `${baseUrl}/v1/streams/${id}`,
      },
      pieces: answer.split(/(?= )/),
      usage,
      status: wait && !streamed ? 'succeeded' : 'starting',
      cut: /\bcut\b/.test(input.prompt),
      noMetrics: /\bnometrics\b/.test(input.prompt),
      streamed,
    };
    predictions.set(id, prediction);
    if (prediction.status === 'succeeded') reported.push(usage);
    const { urls, ...withoutStream } = shown(prediction);
    // a prediction made without `stream: true` names no stream
    const answerBody = streamed
      ? { ...withoutStream, urls }
      : { ...withoutStream, urls: { cancel: prediction.urls.cancel, get: prediction.urls.get } };
    response.writeHead(201, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(answerBody));
  }

  async function stream(prediction: Prediction, response: ServerResponse): Promise<void> {
    prediction.status = 'processing';
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    const pause = () => new Promise((resolve) => setTimeout(resolve, REPLICATE_PIECE_PAUSE_MS));
    response.write(`event: logs\nid: 1732719845:0\ndata: Loaded the weights\n\n`);
    for (const [position, piece] of prediction.pieces.entries()) {
      await pause();
      if (response.destroyed) return;
      // a piece's lines are data lines of one event
      const event = `event: output\nid: 1732719845:${position + 1}\n${piece
        .split('\n')
        .map((line) => `data: ${line}`)
        .join('\n')}\n\n`;
      // written out to the socket before anything else happens to it
      await new Promise((written) => response.write(event, written));
      if (prediction.cut && position === 2) {
        // the pieces sent reach the gateway first; then the connection drops without the chunked body's end
        await pause();
        prediction.status = 'failed';
        response.destroy();
        return;
      }
    }
    await pause();
    prediction.status = 'succeeded';
    reported.push(prediction.usage);
    response.end(`event: done\nid: 1732719845:${prediction.pieces.length + 1}\ndata: {}\n\n`);
  }

  const server = createServer((request, response) => {
    void (async () => {
      const { text, body } = await readRequestBody(request);
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw: text });
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (request.headers.authorization !== `Bearer ${GOOD_TOKEN}`)
        return problem(response, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
      const streamOf = /^\/v1\/streams\/(\w+)$/.exec(path);
      if (request.method === 'GET' && streamOf) {
        const prediction = predictions.get(streamOf[1]);
        if (!prediction?.streamed || request.headers.accept !== 'text/event-stream')
          return problem(response, 404, 'Not found', 'The requested resource could not be found.');
        return stream(prediction, response);
      }
      const predictionOf = /^\/v1\/predictions\/(\w+)$/.exec(path);
      if (request.method === 'GET' && predictionOf) {
        const prediction = predictions.get(predictionOf[1]);
        if (!prediction) return problem(response, 404, 'Not found', 'The requested resource could not be found.');
        if (prediction.noMetrics && prediction.status === 'succeeded')
          return problem(response, 500, 'Internal server error', 'Something went wrong.');
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(shown(prediction)));
        return;
      }
      if (request.method !== 'POST' || path !== `/v1/models/${MODEL}/predictions`)
        return problem(response, 404, 'Not found', 'The requested resource could not be found.');
      if (!body || typeof body !== 'object') return problem(response, 400, 'Bad request', 'The body is not JSON.');
      create(
        `http://${request.headers.host ?? '127.0.0.1'}`,
        body as Record<string, unknown>,
        /^wait\b/.test(String(request.headers.prefer ?? '')),
        response,
      );
    })().catch((error: unknown) => {
      if (!response.headersSent) problem(response, 500, 'Internal error', String(error));
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported };
}
