// The benchmark's floor, the "lean relay": the least work a relay can honestly do for one chat request, and
// nothing more. node:http in, the body read as Buffers and joined once, the client's key looked up in a Map, one
// JSON.parse (a relay must know the model and whether the answer streams), an undici Pool to the upstream, the
// answer handed back chunk by chunk from 'data' events (no async iteration, no web streams), and the usage read
// from the answer's last chunk, as a relay must for billing. What it reads, it only counts.
//
// One lean relay per vendor protocol, for the protocol rows: `openai` (the bearer key swapped for the upstream's,
// a stream asked for its usage), `anthropic` (the Messages API: the key as x-api-key with the client's
// anthropic-version; its streams carry their usage unasked) and `bedrock` (Converse, signed with SigV4 by the
// client: the signed headers go upstream as they came, and the client's own key comes in x-relay-key).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface Passthrough {
  baseUrl: string;
  /** What the relay read from the answers: the tokens it would bill, and how many answers carried no usage. */
  billed: { promptTokens: number; completionTokens: number; withoutUsage: number };
  close(): Promise<void>;
}

/** OpenAI's, Anthropic's and Converse's names for the tokens in and out. */
interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  inputTokens?: number;
  outputTokens?: number;
}

const USAGE = Buffer.from('"usage"');
const DATA = Buffer.from('data: ');
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BAD_KEY = '{"error":{"message":"invalid key","type":"invalid_request_error","param":null,"code":null}}';
const BAD_JSON = '{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}';

/** The JSON object that follows `"usage":` at `at`, parsed; undefined when it is null or cut off. */
function usageObjectAt(text: Buffer, at: number): Usage | undefined {
  const start = text.indexOf(OPEN_BRACE, at + USAGE.length);
  if (start < 0) return undefined;
  // usage holds numbers and nested objects of numbers, never strings: counting braces finds its end
  let depth = 0;
  for (let index = start; index < text.length; index += 1) {
    const byte = text[index];
    if (byte === OPEN_BRACE) depth += 1;
    else if (byte === CLOSE_BRACE && --depth === 0) return JSON.parse(text.toString('latin1', start, index + 1)) as Usage;
  }
  return undefined;
}

/**
 * The usage of an answer from its tail (the last chunk, or the last two joined when the usage may straddle
 * them): a plain answer carries `"usage"` near its end; a stream carries it in its last data event that has one,
 * which this parses whole, as a relay that trusts nothing but the event would.
 */
function usageOf(tail: Buffer, streamed: boolean): Usage | undefined {
  const at = tail.lastIndexOf(USAGE);
  if (at < 0) return undefined;
  if (!streamed) return usageObjectAt(tail, at);
  const event = tail.lastIndexOf(DATA, at);
  if (event < 0) return undefined;
  const end = tail.indexOf('\n', at);
  return (JSON.parse(tail.toString('utf8', event + DATA.length, end < 0 ? tail.length : end)) as { usage?: Usage }).usage ?? undefined;
}

export type LeanProtocol = 'openai' | 'anthropic' | 'bedrock';

/** The headers a SigV4 signature covers, from its SignedHeaders (host aside: the pool names the upstream itself). */
function signedHeaderNames(authorization: string): string[] {
  const listed = /SignedHeaders=([a-z0-9;-]+)/.exec(authorization)?.[1] ?? '';
  return ['authorization', ...listed.split(';').filter((name) => name !== '' && name !== 'host')];
}

export async function startPassthrough(options: {
  upstream: string;
  upstreamKey: string;
  clientKeys: string[];
  protocol?: LeanProtocol;
}): Promise<Passthrough> {
  const protocol = options.protocol ?? 'openai';
  const pool = new Pool(options.upstream, { connections: 128, pipelining: 1 });
  const keys = new Map(options.clientKeys.map((key) => [key, { name: key }]));
  const upstreamAuthorization = `Bearer ${options.upstreamKey}`;
  const billed = { promptTokens: 0, completionTokens: 0, withoutUsage: 0 };

  /** The upstream's headers for the client's `request`. */
  function upstreamHeaders(request: IncomingMessage): Record<string, string> {
    if (protocol === 'openai') return { 'content-type': 'application/json', authorization: upstreamAuthorization };
    if (protocol === 'anthropic') {
      const version = request.headers['anthropic-version'];
      return { 'content-type': 'application/json', 'x-api-key': options.upstreamKey, 'anthropic-version': String(version ?? '2023-06-01') };
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const name of signedHeaderNames(request.headers.authorization ?? '')) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return headers;
  }

  /** The client's key: its bearer, or x-relay-key where the authorization is the upstream's signature. */
  function clientKeyOf(request: IncomingMessage): string | undefined {
    if (protocol === 'bedrock') {
      const key = request.headers['x-relay-key'];
      return typeof key === 'string' ? key : undefined;
    }
    const authorization = request.headers.authorization ?? '';
    return authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  }

  function relay(request: IncomingMessage, response: ServerResponse, raw: Buffer): void {
    let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(BAD_JSON);
      return;
    }
    // Converse names its model in the path
    if (protocol !== 'bedrock' && typeof body.model !== 'string') {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(BAD_JSON);
      return;
    }
    const streamed = body.stream === true;
    // a stream tells its usage only when asked: a relay that bills must ask, which costs one serialisation;
    // otherwise the client's bytes go upstream as they came
    const upstreamBody =
      protocol === 'openai' && streamed && body.stream_options?.include_usage !== true
        ? JSON.stringify({ ...body, stream_options: { ...body.stream_options, include_usage: true } })
        : raw;
    pool.request(
      {
        method: 'POST',
        path: request.url ?? '/',
        headers: upstreamHeaders(request),
        body: upstreamBody,
      },
      (error, upstream) => {
        if (error) {
          if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
          response.end();
          return;
        }
        response.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
        const answer = upstream.body;
        let last: Buffer | undefined;
        let beforeLast: Buffer | undefined;
        answer.on('data', (chunk: Buffer) => {
          beforeLast = last;
          last = chunk;
          // a slow client holds the upstream back rather than the relay's memory
          if (!response.write(chunk)) {
            answer.pause();
            response.once('drain', () => answer.resume());
          }
        });
        // a client that went away ends its upstream call
        response.once('close', () => {
          if (!response.writableFinished) answer.destroy();
        });
        answer.on('end', () => {
          response.end();
          if (last === undefined) return;
          let usage = usageOf(last, streamed);
          if (usage === undefined && beforeLast !== undefined) usage = usageOf(Buffer.concat([beforeLast, last]), streamed);
          if (usage === undefined) billed.withoutUsage += 1;
          else {
            billed.promptTokens += usage.prompt_tokens ?? usage.input_tokens ?? usage.inputTokens ?? 0;
            billed.completionTokens += usage.completion_tokens ?? usage.output_tokens ?? usage.outputTokens ?? 0;
          }
        });
        answer.on('error', () => response.destroy());
      },
    );
  }

  const server: Server = createServer((request, response) => {
    const key = clientKeyOf(request);
    if (key === undefined || !keys.has(key)) {
      request.resume();
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(BAD_KEY);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => relay(request, response, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    billed,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      await pool.close();
    },
  };
}
