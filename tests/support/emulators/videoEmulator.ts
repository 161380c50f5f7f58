// OpenAI's Videos API (Sora) as a local emulator: POST /v1/videos makes a
// video whose course the test chose beforehand (`plan`): completed after N
// polls of GET /v1/videos/{id}, failed after N, or stuck in progress for
// ever. Its content is a fixed run of bytes served with Range support (206
// and Content-Range), and DELETE forgets it. Each video belongs to the key
// that made it: another key's GET answers 404, as OpenAI's does. The prompt
// "refuse me" is refused at once (400), as a moderated prompt is.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';

export interface VideoPlan {
  outcome: 'completed' | 'failed' | 'stuck';
  /** GETs answered queued / in_progress before the outcome. */
  polls: number;
}

interface EmulatedVideo {
  id: string;
  key: string;
  model: string;
  seconds: string;
  size: string;
  plan: VideoPlan;
  polled: number;
  createdAt: number;
}

export interface VideoEmulator {
  baseUrl: string;
  /** What the next video created will do. */
  plan: VideoPlan;
  /** The bytes every video's content is. */
  content: Buffer;
  /** While true, a poll (GET /v1/videos/{id}) gets no answer until it is set false again. */
  stallPolls: boolean;
  /** Requests seen, as "METHOD /path". */
  requests: string[];
  /** Bodies of the creates, as received (JSON text, or multipart bytes as text). */
  creates: string[];
  videos: Map<string, EmulatedVideo>;
  close(): Promise<void>;
}

function videoObject(video: EmulatedVideo) {
  const { outcome, polls } = video.plan;
  const done = outcome !== 'stuck' && video.polled > polls;
  const status = done ? outcome : video.polled === 0 ? 'queued' : 'in_progress';
  return {
    id: video.id,
    object: 'video',
    model: video.model,
    status,
    progress: status === 'completed' ? 100 : Math.min(99, video.polled * 30),
    created_at: video.createdAt,
    completed_at: status === 'completed' ? video.createdAt + 60 : null,
    expires_at: status === 'completed' ? video.createdAt + 86_400 : null,
    seconds: video.seconds,
    size: video.size,
    remixed_from_video_id: null,
    error: status === 'failed' ? { code: 'moderation_blocked', message: 'the prompt was refused' } : null,
  };
}

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
};

const notFound = (response: ServerResponse) =>
  send(response, 404, { error: { message: 'Video not found', type: 'invalid_request_error', code: null } });

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** A text field of a JSON body, or of a multipart one (found by its name). */
function fieldOf(body: Buffer, contentType: string, name: string): string | undefined {
  if (contentType.startsWith('application/json')) {
    const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  }
  const match = new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(body.toString('latin1'));
  return match?.[1];
}

/** `content` whole, or the Range asked (206 and Content-Range; 416 outside it): how a vendor serves a video file. */
export function serveContent(content: Buffer, request: IncomingMessage, response: ServerResponse): void {
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
  if (!range) {
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': content.length, 'accept-ranges': 'bytes' });
    return void response.end(content);
  }
  const start = Number(range[1]);
  const end = range[2] === '' ? content.length - 1 : Math.min(Number(range[2]), content.length - 1);
  if (start > end) {
    response.writeHead(416, { 'content-range': `bytes */${content.length}` });
    return void response.end();
  }
  response.writeHead(206, {
    'content-type': 'video/mp4',
    'content-length': end - start + 1,
    'content-range': `bytes ${start}-${end}/${content.length}`,
    'accept-ranges': 'bytes',
  });
  response.end(content.subarray(start, end + 1));
}

async function handle(emulator: VideoEmulator, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://emulator');
  emulator.requests.push(`${request.method} ${url.pathname}`);
  const key = request.headers.authorization ?? '';
  const body = await readBody(request);
  if (request.method === 'POST' && url.pathname === '/v1/videos') {
    const contentType = request.headers['content-type'] ?? '';
    emulator.creates.push(body.toString('latin1'));
    if (fieldOf(body, contentType, 'prompt') === 'refuse me')
      return send(response, 400, {
        error: { message: 'Your request was blocked by our moderation system.', type: 'invalid_request_error', code: 'moderation_blocked' },
      });
    const video: EmulatedVideo = {
      id: `video_up_${randomBytes(6).toString('hex')}`,
      key,
      model: fieldOf(body, contentType, 'model') ?? 'sora-2',
      seconds: fieldOf(body, contentType, 'seconds') ?? '4',
      size: fieldOf(body, contentType, 'size') ?? '720x1280',
      plan: { ...emulator.plan },
      polled: 0,
      createdAt: Math.floor(Date.now() / 1000),
    };
    emulator.videos.set(video.id, video);
    return send(response, 200, videoObject(video));
  }
  const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(url.pathname);
  const video = match ? emulator.videos.get(match[1]) : undefined;
  if (!match || !video || video.key !== key) return notFound(response);
  if (request.method === 'DELETE') {
    emulator.videos.delete(video.id);
    return send(response, 200, { id: video.id, object: 'video.deleted', deleted: true });
  }
  if (match[2]) return serveContent(emulator.content, request, response);
  while (emulator.stallPolls) await new Promise((wake) => setTimeout(wake, 20));
  video.polled += 1;
  return send(response, 200, videoObject(video));
}

export async function startVideoEmulator(): Promise<VideoEmulator> {
  const emulator: VideoEmulator = {
    baseUrl: '',
    plan: { outcome: 'completed', polls: 1 },
    stallPolls: false,
    content: Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 7) % 256)),
    requests: [],
    creates: [],
    videos: new Map(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    handle(emulator, request, response).catch(() => send(response, 500, { error: { message: 'emulator failed' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  emulator.baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return emulator;
}
