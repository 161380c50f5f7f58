// /healthz and /readyz, for load balancers and orchestrators. Both are
// answered straight off Node's HTTP server, before Fastify (and also as
// Fastify routes, for app.inject), so they never wait behind the console's
// hooks, are never rate-limited or logged, and still answer while the
// gateway shuts down, when Fastify refuses everything with its own 503.
//
// /healthz: 200 while the process serves, whatever else is down.
// /readyz: 200 when the database answers a trivial query and, when Redis is
// configured, Redis answers PING, each within READY_CHECK_TIMEOUT_MS; else
// 503 with a JSON body naming what failed. 503 as soon as a shutdown begins,
// so a balancer stops sending new requests while the open ones finish.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { pingDatabase } from '../repositories/readiness';

/** How long each dependency may take to answer before it counts as down. */
export const READY_CHECK_TIMEOUT_MS = 1000;

export interface ReadinessSources {
  db: Kysely<Database>;
  redis?: Redis;
  isClosing: () => boolean;
  timeoutMs?: number;
}

export interface Readiness {
  ready: boolean;
  /** Each dependency: 'ok', or why it is not. */
  checks: Record<string, string>;
}

function withinTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Why a check failed, in a few words and without addresses or credentials. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/within \d+ ms/.test(message)) return message;
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && code !== '' ? `unreachable (${code})` : 'unreachable';
}

export async function checkReadiness(sources: ReadinessSources): Promise<Readiness> {
  const timeoutMs = sources.timeoutMs ?? READY_CHECK_TIMEOUT_MS;
  if (sources.isClosing()) return { ready: false, checks: { shutdown: 'the gateway is shutting down' } };
  const checks: Record<string, string> = {};
  const database = withinTimeout(pingDatabase(sources.db), timeoutMs, 'the database').then(
    () => void (checks.database = 'ok'),
    (error: unknown) => void (checks.database = reasonOf(error)),
  );
  const { redis } = sources;
  const redisCheck = redis
    ? withinTimeout(redis.ping(), timeoutMs, 'Redis').then(
        () => void (checks.redis = 'ok'),
        (error: unknown) => void (checks.redis = redis.status === 'ready' ? reasonOf(error) : `not connected (${redis.status})`),
      )
    : undefined;
  await Promise.all([database, redisCheck]);
  return { ready: Object.values(checks).every((value) => value === 'ok'), checks };
}

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  response.end(text);
}

export const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/** Answers a probe on Node's response; `path` is /healthz or /readyz. */
export async function answerProbe(path: string, response: ServerResponse, sources: ReadinessSources): Promise<void> {
  if (path === '/healthz') return answerJson(response, 200, { status: 'ok' });
  const readiness = await checkReadiness(sources);
  answerJson(response, readiness.ready ? 200 : 503, { status: readiness.ready ? 'ready' : 'not ready', checks: readiness.checks });
}

/** The probes before Fastify: true when this request was one (GET or HEAD of an exact probe path). */
export function probeFastPath(request: IncomingMessage, response: ServerResponse, sources: ReadinessSources): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (!PROBE_PATHS.has(path)) return false;
  answerProbe(path, response, sources).catch(() => answerJson(response, 503, { status: 'not ready', checks: { probe: 'failed' } }));
  return true;
}
