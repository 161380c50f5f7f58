// Google's Veo as a local emulator, on both of Google's wires, written from
// the Gemini API's REST reference (ai.google.dev/gemini-api/docs/video) and
// Vertex AI's (model-reference/veo-video-generation), with the field names of
// googleapis/python-genai (_GenerateVideosParameters_to_mldev / _to_vertex):
// - Gemini API: POST /v1beta/models/{model}:predictLongRunning (x-goog-api-key)
//   answers {name:"models/{model}/operations/{id}"}; GET /v1beta/{name} answers
//   {name, done} and, done, `error` or
//   response.generateVideoResponse.generatedSamples[0].video.uri, a file at
//   GET /v1beta/files/{id}:download?alt=media (the key again; Range served).
// - Vertex AI: POST /v1/projects/{p}/locations/{r}/publishers/google/models/{model}:predictLongRunning
//   and :fetchPredictOperation {operationName} (a Bearer token); done, the
//   response holds videos[0].bytesBase64Encoded and mimeType (or gcsUri).
// Each operation follows the test's plan: done after `polls` polls, as a
// video, a failure (error), a safety-filtered result (raiMediaFilteredReasons
// and no video) or, on Vertex, a Cloud Storage object.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { listenOnLoopback, readRequestBody, type EmulatedRequest } from './types';
import { serveContent } from './videoEmulator';
import { GoogleError, sendJson } from './vertex';

export const VEO_KEY = 'AIzaSy-veo-emulator-key';

export interface VeoPlan {
  outcome: 'completed' | 'failed' | 'filtered' | 'gcs';
  /** Polls answered done:false before the outcome. */
  polls: number;
}

interface Operation {
  name: string;
  wire: 'gemini' | 'vertex';
  plan: VeoPlan;
  polled: number;
}

export interface VeoEmulator {
  baseUrl: string;
  /** What the next operation does. */
  plan: VeoPlan;
  /** Every video's bytes. */
  content: Buffer;
  requests: EmulatedRequest[];
  /** The predictLongRunning bodies, parsed. */
  submits: Array<{ instances: Array<Record<string, unknown>>; parameters: Record<string, unknown> }>;
  operations: Map<string, Operation>;
  close(): Promise<void>;
}

const PARAMETERS = new Set(['durationSeconds', 'aspectRatio', 'resolution', 'negativePrompt', 'personGeneration', 'sampleCount', 'seed']);

/** Checks a predictLongRunning body as Google does (unknown fields refused, the shapes Veo makes). */
function checkSubmit(body: unknown): VeoEmulator['submits'][number] {
  const submit = body as VeoEmulator['submits'][number];
  const instance = submit?.instances?.[0];
  if (!instance || typeof instance.prompt !== 'string' || !instance.prompt)
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'prompt is required');
  const image = instance.image as { bytesBase64Encoded?: unknown; mimeType?: unknown } | undefined;
  if (image && (typeof image.bytesBase64Encoded !== 'string' || typeof image.mimeType !== 'string'))
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'image needs bytesBase64Encoded and mimeType');
  const parameters = submit.parameters ?? {};
  for (const name of Object.keys(parameters))
    if (!PARAMETERS.has(name)) throw new GoogleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${name}"`);
  if (![4, 5, 6, 8].includes(parameters.durationSeconds as number))
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'Unsupported output video duration');
  if (!['16:9', '9:16'].includes(parameters.aspectRatio as string)) throw new GoogleError(400, 'INVALID_ARGUMENT', 'bad aspectRatio');
  if (parameters.resolution !== undefined && !['720p', '1080p'].includes(parameters.resolution as string))
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'bad resolution');
  return submit;
}

/** The operation as Google reports it now (a poll counts). */
function operationJson(emulator: VeoEmulator, operation: Operation): Record<string, unknown> {
  operation.polled += 1;
  const { outcome, polls } = operation.plan;
  if (operation.polled <= polls) return { name: operation.name, done: false };
  if (outcome === 'failed') return { name: operation.name, done: true, error: { code: 3, message: 'The input image could not be used.' } };
  const reasons = { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The video was filtered by our safety policies.'] };
  if (operation.wire === 'gemini') {
    const type = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
    const id = operation.name.split('/').at(-1);
    const generateVideoResponse =
      outcome === 'filtered'
        ? reasons
        : { generatedSamples: [{ video: { uri: `${emulator.baseUrl}/v1beta/files/${id}:download?alt=media` } }] };
    return { name: operation.name, done: true, response: { '@type': type, generateVideoResponse } };
  }
  const type = 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse';
  if (outcome === 'filtered') return { name: operation.name, done: true, response: { '@type': type, ...reasons, videos: [] } };
  const video =
    outcome === 'gcs'
      ? { gcsUri: 'gs://a-bucket/videos/sample_0.mp4', mimeType: 'video/mp4' }
      : { bytesBase64Encoded: emulator.content.toString('base64'), mimeType: 'video/mp4' };
  return { name: operation.name, done: true, response: { '@type': type, videos: [video] } };
}

const GEMINI_SUBMIT = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/;
const GEMINI_OPERATION = /^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/;
const GEMINI_FILE = /^\/v1beta\/files\/([^/:]+):download$/;
const VERTEX_MODEL =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(predictLongRunning|fetchPredictOperation)$/;

function newOperation(emulator: VeoEmulator, wire: Operation['wire'], prefix: string): Operation {
  const operation = { name: `${prefix}/operations/${randomBytes(8).toString('hex')}`, wire, plan: { ...emulator.plan }, polled: 0 };
  emulator.operations.set(operation.name, operation);
  return operation;
}

function handleGemini(emulator: VeoEmulator, request: IncomingMessage, path: string, body: unknown, response: ServerResponse) {
  if (request.headers['x-goog-api-key'] !== VEO_KEY)
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
  const submit = GEMINI_SUBMIT.exec(path);
  if (submit && request.method === 'POST') {
    emulator.submits.push(checkSubmit(body));
    return sendJson(response, 200, { name: newOperation(emulator, 'gemini', `models/${submit[1]}`).name });
  }
  const polled = GEMINI_OPERATION.exec(path);
  const operation = polled ? emulator.operations.get(polled[1]) : undefined;
  if (operation && request.method === 'GET') return sendJson(response, 200, operationJson(emulator, operation));
  const file = GEMINI_FILE.exec(path);
  const made = file && [...emulator.operations.keys()].some((name) => name.endsWith(`/operations/${file[1]}`));
  if (made && request.method === 'GET') return serveContent(emulator.content, request, response);
  throw new GoogleError(404, 'NOT_FOUND', `The requested URL ${path} was not found on this server.`);
}

function handleVertex(emulator: VeoEmulator, request: IncomingMessage, path: string, body: unknown, response: ServerResponse) {
  const match = VERTEX_MODEL.exec(path);
  if (!match || request.method !== 'POST')
    throw new GoogleError(404, 'NOT_FOUND', `The requested URL ${path} was not found on this server.`);
  if (!/^Bearer .+/.test(request.headers.authorization ?? ''))
    throw new GoogleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
  const [, project, region, model, method] = match;
  const prefix = `projects/${project}/locations/${region}/publishers/google/models/${model}`;
  if (method === 'predictLongRunning') {
    emulator.submits.push(checkSubmit(body));
    return sendJson(response, 200, { name: newOperation(emulator, 'vertex', prefix).name });
  }
  const name = (body as { operationName?: unknown })?.operationName;
  const operation = typeof name === 'string' && name.startsWith(`${prefix}/`) ? emulator.operations.get(name) : undefined;
  if (!operation) throw new GoogleError(404, 'NOT_FOUND', `Operation ${String(name)} not found.`);
  return sendJson(response, 200, operationJson(emulator, operation));
}

export async function startVeoEmulator(): Promise<VeoEmulator> {
  const emulator: VeoEmulator = {
    baseUrl: '',
    plan: { outcome: 'completed', polls: 1 },
    content: Buffer.from(Array.from({ length: 300_000 }, (_, index) => (index * 13 + 5) % 256)),
    requests: [],
    submits: [],
    operations: new Map(),
    close: () => Promise.resolve(),
  };
  const server = createServer((request, response) => {
    void (async () => {
      const { body } = await readRequestBody(request);
      const url = new URL(request.url ?? '/', 'http://emulator');
      emulator.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      if (url.pathname.startsWith('/v1beta/')) return handleGemini(emulator, request, url.pathname, body, response);
      return handleVertex(emulator, request, url.pathname, body, response);
    })().catch((error: unknown) => {
      const google = error instanceof GoogleError ? error : new GoogleError(500, 'INTERNAL', String(error));
      sendJson(response, google.code, { error: { code: google.code, message: google.message, status: google.status } });
    });
  });
  const listening = await listenOnLoopback(server);
  emulator.baseUrl = listening.baseUrl;
  emulator.close = () => listening.close();
  return emulator;
}
