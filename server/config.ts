// Process configuration from environment variables, with sane defaults.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { passwordHashCostFromEnv } from './passwords';

/** one-api's releases: Switchboard reports their version (v0.5.3) and follows their tags. */
export const DEFAULT_RELEASE_CHECK_URL = 'https://api.github.com/repos/songquanpeng/one-api/releases/latest';
export const DEFAULT_OPTION_SYNC_SECONDS = 10;
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 200;
/**
 * How long a PostgreSQL/MySQL request waits for a connection (a new one, or a
 * free one from the pool) before it fails with a 503, so an outage answers
 * quickly instead of hanging the client.
 */
export const DEFAULT_SQL_CONNECT_TIMEOUT_MS = 3000;

/** Connections and deadlines per upstream origin (relay/upstream.ts applies them to its pools). */
export interface UpstreamSettings {
  /** Connections per origin, and so calls in flight per origin. */
  maxConnections: number;
  connectTimeoutMs: number;
  /** Until the answer's headers: its first byte. */
  firstByteTimeoutMs: number;
  /** Between two pieces of the body. */
  idleTimeoutMs: number;
  /** How long a call waits for a free connection before it is refused with UpstreamBusy. */
  queueTimeoutMs: number;
}

export const DEFAULT_UPSTREAM_SETTINGS: Readonly<UpstreamSettings> = {
  maxConnections: 256,
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 120_000,
  idleTimeoutMs: 60_000,
  queueTimeoutMs: 1_000,
};

export interface WebhookSettings {
  /** Delays before the 2nd, 3rd, ... attempt; attempts in all = delays + 1. */
  retryDelaysMs: number[];
  /** How often each node looks for due deliveries. */
  pollIntervalMs: number;
  /** Deadline of one attempt, connection to last byte. */
  timeoutMs: number;
  /** Days a finished (delivered or failed) delivery stays in the log; 0 keeps them all. */
  logDays: number;
}

/** 6 attempts over about an hour: at once, then 10 s, 1 min, 5 min, 15 min and 40 min later. */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  retryDelaysMs: [10_000, 60_000, 300_000, 900_000, 2_400_000],
  pollIntervalMs: 1000,
  timeoutMs: 10_000,
  logDays: 30,
};

/** Per-client-IP limits on the sensitive console endpoints (plugins/rateLimit.ts, services/rateLimiter.ts). */
export interface RateLimitRule {
  /** Requests allowed per window; 0 turns the limit off. */
  max: number;
  windowSeconds: number;
}

export interface RateLimitConfig {
  /** Login, registration, e-mail codes, password reset, OAuth callbacks. */
  critical: RateLimitRule;
  topUp: RateLimitRule;
}

export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  critical: { max: 20, windowSeconds: 20 * 60 },
  topUp: { max: 20, windowSeconds: 60 },
};

// ---- sign-in: failed attempts per (IP, account) and per IP ----

export interface LoginLimitConfig {
  /** Failed sign-ins one address may make against one account per window. */
  perAccount: RateLimitRule;
  /** Failed sign-ins one address may make in all per window (spraying many accounts). */
  perIp: RateLimitRule;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimitConfig = {
  perAccount: { max: 10, windowSeconds: 20 * 60 },
  perIp: { max: 100, windowSeconds: 20 * 60 },
};

// The relay forwards uploads (audio, long prompts), so /v1 keeps a large
// limit; the console API never needs more than a form's worth (plugins/inputLimits.ts).
/** /v1 bodies (BODY_LIMIT_BYTES): what one-api v0.5.3 accepted for uploads. */
export const DEFAULT_RELAY_BODY_LIMIT = 32 * 1024 * 1024;
/** /api bodies (API_BODY_LIMIT_BYTES): the largest form is far smaller. */
export const DEFAULT_API_BODY_LIMIT = 1024 * 1024;

/** Where Cloudflare Turnstile tokens are verified (plugins/turnstile.ts). */
export const DEFAULT_TURNSTILE_VERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export type DatabaseConfig =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'postgres'; connectionString: string; connectTimeoutMs?: number }
  | { dialect: 'mysql'; connectionString: string; connectTimeoutMs?: number };

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  redisUrl?: string;
  /** Milliseconds a Redis command may take before the node goes on without Redis (rate limits count locally); default 200. */
  redisCommandTimeoutMs?: number;
  /** Prefixes the relay rate limits' Redis keys (REDIS_KEY_PREFIX), for deployments sharing one Redis; default none. */
  redisKeyPrefix?: string;
  /** 32-byte key for signing session cookies. */
  sessionSecret: Buffer;
  initialRootPassword?: string;
  /** PASSWORD_HASH_COST: bcrypt's work factor for passwords set from now on (default 10; tests use 4). */
  passwordHashCost?: number;
  consoleDir: string;
  /** When true, X-Forwarded-For / X-Forwarded-Proto are believed. */
  trustProxy: boolean;
  logLevel: string;
  /** Where Turnstile tokens are verified (a local verifier in tests). */
  turnstileVerifyUrl: string;
  rateLimits: RateLimitConfig;
  /** Failed sign-ins allowed per (IP, account) and per IP; DEFAULT_LOGIN_LIMITS when absent. */
  loginLimits?: LoginLimitConfig;
  /** GitHub's web and API bases (local fakes in tests). */
  githubOAuthUrl: string;
  githubApiUrl: string;
  /** Seconds between re-tests of channels the system disabled; 0 turns the health checker off. */
  channelRetestIntervalSeconds: number;
  /**
   * QUOTA_LEASES (PostgreSQL and MySQL; default on): each node holds quota in short leases and reserves from
   * them in memory (billing/leaseLedger.ts); off, every reservation is a transaction with a row of its own.
   */
  quotaLeases?: boolean;
  /** Seconds between reloads of the options table, so nodes sharing a database converge (default 10; 0 = off). */
  optionSyncSeconds?: number;
  /** Where the update check reads the latest release (a GitHub "latest release" API answer). */
  releaseCheckUrl?: string;
  /** Connections, timeouts and the wait for a free connection, per upstream origin (defaults: DEFAULT_UPSTREAM_SETTINGS). */
  upstream?: Partial<UpstreamSettings>;
  /** How long SIGTERM lets open requests and streams run before it cuts (and bills) them; default 60. */
  shutdownGraceSeconds?: number;
  /** SHUTDOWN_DRAIN_SECONDS: after SIGTERM, how long /readyz says 503 while requests are still taken, before the stop begins (default 0). */
  shutdownDrainSeconds?: number;
  /** Largest /v1 request body in bytes (BODY_LIMIT_BYTES, default 32 MiB); larger ones get 413. */
  relayBodyLimitBytes?: number;
  /** Largest /api request body in bytes (API_BODY_LIMIT_BYTES, default 1 MiB); larger ones get 413. */
  apiBodyLimitBytes?: number;
  /** Worker processes sharing the port (WORKERS; default one per core on PostgreSQL/MySQL, always 1 on SQLite). */
  workers?: number;
  /** NODE_ID_HEADER: every answer says which node (worker) gave it, in X-Switchboard-Node. */
  nodeIdHeader?: boolean;
  /** Webhook retry schedule, poll interval and attempt deadline (defaults: DEFAULT_WEBHOOK_SETTINGS). */
  webhooks?: Partial<WebhookSettings>;
  /** How asynchronous tasks (videos) are polled (defaults: relay/tasks/poller.ts DEFAULT_TASK_POLL_SETTINGS; intervalMs 0: no timer). */
  tasks?: Partial<TaskPollSettings>;
  /** How gateway-run batches are run (defaults: relay/batches/selfRun.ts DEFAULT_BATCH_RUN_SETTINGS; intervalMs 0: no timer). */
  batches?: Partial<BatchRunSettings>;
  /** GET /metrics and the counting behind it (METRICS_ENABLED, default on); false leaves the relay without metrics hooks. */
  metricsEnabled?: boolean;
  /** When set (METRICS_TOKEN), /metrics asks for `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** FILES_S3_*: /v1/files keep their bytes in this bucket; unset, in the database. */
  filesS3?: S3FileStoreSettings;
}

/**
 * WORKERS: unset, empty or `auto` is one per core on PostgreSQL and MySQL and
 * one on SQLite. More than one on SQLite is refused: one process per file
 * (its instance lock), which the relay's bookkeeping relies on.
 */
export function workersFromEnv(env: NodeJS.ProcessEnv, database: DatabaseConfig, cores = availableParallelism()): number {
  const raw = env.WORKERS?.trim() ?? '';
  if (raw === '' || raw.toLowerCase() === 'auto') return database.dialect === 'sqlite' ? 1 : cores;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`WORKERS must be a whole number of processes, 1 or more (or auto), got ${raw}`);
  if (value > 1 && database.dialect === 'sqlite') {
    throw new Error(
      `WORKERS=${value} needs PostgreSQL or MySQL (SQL_DSN): a SQLite file is served by one process; leave WORKERS unset or 1`,
    );
  }
  return value;
}

export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 60;

export function databaseFromEnv(env: NodeJS.ProcessEnv, dataDir: string): DatabaseConfig {
  const dsn = env.SQL_DSN?.trim();
  if (dsn) {
    const connectTimeoutMs =
      wholeNumberFromEnv(env, 'SQL_CONNECT_TIMEOUT_MS', DEFAULT_SQL_CONNECT_TIMEOUT_MS) || DEFAULT_SQL_CONNECT_TIMEOUT_MS;
    if (/^postgres(ql)?:\/\//.test(dsn)) return { dialect: 'postgres', connectionString: dsn, connectTimeoutMs };
    if (/^mysql:\/\//.test(dsn)) return { dialect: 'mysql', connectionString: dsn, connectTimeoutMs };
    throw new Error('SQL_DSN must start with postgres://, postgresql:// or mysql://');
  }
  const path = env.SQLITE_PATH?.trim() || join(dataDir, 'switchboard.db');
  return { dialect: 'sqlite', path };
}

/** Reads SESSION_SECRET, or creates one in the data folder on first start so restarts keep sessions. */
function sessionSecretFromEnv(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const configured = env.SESSION_SECRET?.trim();
  if (configured) return Buffer.from(configured, 'utf8');
  const file = join(dataDir, 'session-secret');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString('hex'), { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

function wholeNumberFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number (0 = off), got ${raw}`);
  return value;
}

/** A positive duration, possibly fractional (tests use short ones). */
function durationFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

/** WEBHOOK_RETRY_DELAYS_SECONDS: comma-separated positive seconds (fractions allowed), one per retry. */
function retryDelaysFromEnv(env: NodeJS.ProcessEnv): number[] {
  const raw = env.WEBHOOK_RETRY_DELAYS_SECONDS?.trim();
  if (!raw) return DEFAULT_WEBHOOK_SETTINGS.retryDelaysMs;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.some((delay) => !Number.isFinite(delay) || delay <= 0))
    throw new Error(`WEBHOOK_RETRY_DELAYS_SECONDS must be positive seconds separated by commas, got ${raw}`);
  return delays.map((delay) => Math.round(delay * 1000));
}

function byteLimitFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name} must be a number of bytes, 1 or more, got ${raw}`);
  return value;
}

/** DATA_DIR, else the SQLite file's folder, else ./data. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv): string {
  const sqlitePath = env.SQLITE_PATH?.trim();
  if (env.DATA_DIR?.trim()) return resolve(env.DATA_DIR);
  return sqlitePath && sqlitePath !== ':memory:' ? dirname(resolve(sqlitePath)) : resolve('data');
}

/** Reads the whole configuration; each group of settings has a reader of its own below. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = dataDirFromEnv(env);
  const port = portFromEnv(env);
  const database = databaseFromEnv(env, dataDir);
  return {
    port,
    host: textFromEnv(env, 'HOST') ?? '0.0.0.0',
    database,
    workers: workersFromEnv(env, database),
    nodeIdHeader: flagFromEnv(env, 'NODE_ID_HEADER'),
    redisUrl: textFromEnv(env, 'REDIS_CONN_STRING'),
    redisCommandTimeoutMs:
      wholeNumberFromEnv(env, 'REDIS_COMMAND_TIMEOUT_MS', DEFAULT_REDIS_COMMAND_TIMEOUT_MS) || DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    redisKeyPrefix: textFromEnv(env, 'REDIS_KEY_PREFIX'),
    sessionSecret: sessionSecretFromEnv(env, dataDir),
    initialRootPassword: env.INITIAL_ROOT_PASSWORD || undefined,
    passwordHashCost: passwordHashCostFromEnv(env.PASSWORD_HASH_COST),
    consoleDir: resolve(textFromEnv(env, 'CONSOLE_DIR') ?? join(repoRoot, 'dist')),
    trustProxy: flagFromEnv(env, 'TRUSTED_PROXY'),
    logLevel: textFromEnv(env, 'LOG_LEVEL') ?? 'warn',
    turnstileVerifyUrl: textFromEnv(env, 'TURNSTILE_VERIFY_URL') ?? DEFAULT_TURNSTILE_VERIFY_URL,
    githubOAuthUrl: (textFromEnv(env, 'GITHUB_OAUTH_URL') ?? 'https://github.com').replace(/\/+$/, ''),
    githubApiUrl: (textFromEnv(env, 'GITHUB_API_URL') ?? 'https://api.github.com').replace(/\/+$/, ''),
    channelRetestIntervalSeconds: wholeNumberFromEnv(env, 'CHANNEL_RETEST_INTERVAL', 300),
    optionSyncSeconds: wholeNumberFromEnv(env, 'SYNC_FREQUENCY', DEFAULT_OPTION_SYNC_SECONDS),
    quotaLeases: flagOnUnlessOffFromEnv(env, 'QUOTA_LEASES'),
    releaseCheckUrl: textFromEnv(env, 'RELEASE_CHECK_URL') ?? DEFAULT_RELEASE_CHECK_URL,
    shutdownGraceSeconds: wholeNumberFromEnv(env, 'SHUTDOWN_GRACE_SECONDS', DEFAULT_SHUTDOWN_GRACE_SECONDS),
    shutdownDrainSeconds: wholeNumberFromEnv(env, 'SHUTDOWN_DRAIN_SECONDS', 0),
    upstream: upstreamFromEnv(env),
    relayBodyLimitBytes: byteLimitFromEnv(env, 'BODY_LIMIT_BYTES', DEFAULT_RELAY_BODY_LIMIT),
    apiBodyLimitBytes: byteLimitFromEnv(env, 'API_BODY_LIMIT_BYTES', DEFAULT_API_BODY_LIMIT),
    webhooks: webhooksFromEnv(env),
    tasks: tasksFromEnv(env),
    batches: { leaseMs: millisecondsFromEnv(env, 'BATCH_LEASE_SECONDS', 600_000) },
    metricsEnabled: flagOnUnlessOffFromEnv(env, 'METRICS_ENABLED'),
    metricsToken: textFromEnv(env, 'METRICS_TOKEN'),
    filesS3: filesS3FromEnv(env),
    rateLimits: rateLimitsFromEnv(env),
    loginLimits: loginLimitsFromEnv(env),
  };
}

/** Where /v1/files keeps its bytes when set (FILES_S3_*): an S3 bucket instead of the database (services/s3FileStore.ts). */
export interface S3FileStoreSettings {
  bucket: string;
  /** An S3-compatible service's URL (MinIO, R2, ...); unset is AWS's own for the region. */
  endpoint?: string;
  region: string;
  /** Both, or neither: the SDK's default credentials (AWS_* variables, an instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `<endpoint>/<bucket>/<key>` rather than `<bucket>.<endpoint>/<key>`. */
  forcePathStyle: boolean;
  /** Put before `files/` in every key, for a bucket shared with other data. */
  prefix: string;
}

/** FILES_S3_BUCKET and its companions; undefined (the database store) when no bucket is set. */
export function filesS3FromEnv(env: NodeJS.ProcessEnv): S3FileStoreSettings | undefined {
  const bucket = textFromEnv(env, 'FILES_S3_BUCKET');
  if (!bucket) return undefined;
  const endpoint = textFromEnv(env, 'FILES_S3_ENDPOINT');
  if (endpoint && !/^https?:\/\/[^/]/.test(endpoint)) throw new Error(`FILES_S3_ENDPOINT must be an http(s) URL, got ${endpoint}`);
  const accessKeyId = textFromEnv(env, 'FILES_S3_ACCESS_KEY_ID');
  const secretAccessKey = textFromEnv(env, 'FILES_S3_SECRET_ACCESS_KEY');
  if (!accessKeyId !== !secretAccessKey)
    throw new Error('FILES_S3_ACCESS_KEY_ID and FILES_S3_SECRET_ACCESS_KEY are set together, or neither (the SDK finds credentials)');
  const pathStyle = env.FILES_S3_FORCE_PATH_STYLE?.trim();
  return {
    bucket,
    endpoint,
    region: textFromEnv(env, 'FILES_S3_REGION') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    // an S3-compatible service (FILES_S3_ENDPOINT) is usually addressed by path
    forcePathStyle: pathStyle ? flagFromEnv(env, 'FILES_S3_FORCE_PATH_STYLE') : endpoint !== undefined,
    prefix: env.FILES_S3_PREFIX?.trim() ?? '',
  };
}

function portFromEnv(env: NodeJS.ProcessEnv): number {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env.PORT}`);
  return port;
}

/** The variable trimmed; undefined when unset or blank. */
function textFromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/** Off unless 1, true or yes. */
function flagFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  return ['1', 'true', 'yes'].includes((env[name] ?? '').toLowerCase());
}

/** On unless 0, false, no or off. */
function flagOnUnlessOffFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  return !['0', 'false', 'no', 'off'].includes((env[name] ?? '').trim().toLowerCase());
}

/** A duration given in seconds (fractions allowed), in whole milliseconds. */
function millisecondsFromEnv(env: NodeJS.ProcessEnv, name: string, fallbackMs: number): number {
  return Math.round(durationFromEnv(env, name, fallbackMs / 1000) * 1000);
}

function upstreamFromEnv(env: NodeJS.ProcessEnv): Partial<UpstreamSettings> {
  return {
    maxConnections: Math.max(1, wholeNumberFromEnv(env, 'UPSTREAM_MAX_CONNECTIONS', DEFAULT_UPSTREAM_SETTINGS.maxConnections)),
    connectTimeoutMs: millisecondsFromEnv(env, 'UPSTREAM_CONNECT_TIMEOUT_SECONDS', DEFAULT_UPSTREAM_SETTINGS.connectTimeoutMs),
    firstByteTimeoutMs: millisecondsFromEnv(env, 'UPSTREAM_FIRST_BYTE_TIMEOUT_SECONDS', DEFAULT_UPSTREAM_SETTINGS.firstByteTimeoutMs),
    idleTimeoutMs: millisecondsFromEnv(env, 'UPSTREAM_IDLE_TIMEOUT_SECONDS', DEFAULT_UPSTREAM_SETTINGS.idleTimeoutMs),
    queueTimeoutMs: wholeNumberFromEnv(env, 'UPSTREAM_QUEUE_TIMEOUT_MS', DEFAULT_UPSTREAM_SETTINGS.queueTimeoutMs),
  };
}

function webhooksFromEnv(env: NodeJS.ProcessEnv): Partial<WebhookSettings> {
  return {
    retryDelaysMs: retryDelaysFromEnv(env),
    pollIntervalMs: millisecondsFromEnv(env, 'WEBHOOK_POLL_INTERVAL_SECONDS', DEFAULT_WEBHOOK_SETTINGS.pollIntervalMs),
    timeoutMs: millisecondsFromEnv(env, 'WEBHOOK_TIMEOUT_SECONDS', DEFAULT_WEBHOOK_SETTINGS.timeoutMs),
    logDays: wholeNumberFromEnv(env, 'WEBHOOK_LOG_DAYS', DEFAULT_WEBHOOK_SETTINGS.logDays),
  };
}

/** How asynchronous tasks are polled (relay/tasks/poller.ts; its defaults: DEFAULT_TASK_POLL_SETTINGS). */
export interface TaskPollSettings {
  /** Between passes; 0: no timer (tests run passes with runOnce). */
  intervalMs: number;
  /** Between two polls of one task. */
  pollEveryMs: number;
  /** A poll's lease: a node that dies mid-poll holds the task this long at most. */
  leaseMs: number;
  /** Tasks taken per pass. */
  batch: number;
}

/** How gateway-run batches are run (relay/batches/selfRun.ts; its defaults: DEFAULT_BATCH_RUN_SETTINGS). */
export interface BatchRunSettings {
  /** Between passes; 0: no timer (tests run passes with runOnce). */
  intervalMs: number;
  /** A line's lease: a node that dies mid-line holds it this long at most (BATCH_LEASE_SECONDS). */
  leaseMs: number;
  /** A batch's finishing lease (its files written, its hold closed). */
  finishLeaseMs: number;
}

/** TASK_POLL_SECONDS: between two polls of one video (each node looks for due ones twice as often); TASK_LEASE_SECONDS: a poll's lease. */
function tasksFromEnv(env: NodeJS.ProcessEnv): Partial<TaskPollSettings> {
  const pollEveryMs = millisecondsFromEnv(env, 'TASK_POLL_SECONDS', 10_000);
  return { pollEveryMs, intervalMs: Math.max(100, pollEveryMs / 2), leaseMs: millisecondsFromEnv(env, 'TASK_LEASE_SECONDS', 60_000) };
}

function rateLimitsFromEnv(env: NodeJS.ProcessEnv): RateLimitConfig {
  return {
    critical: { ...DEFAULT_RATE_LIMITS.critical, max: wholeNumberFromEnv(env, 'CRITICAL_RATE_LIMIT', DEFAULT_RATE_LIMITS.critical.max) },
    topUp: { ...DEFAULT_RATE_LIMITS.topUp, max: wholeNumberFromEnv(env, 'TOPUP_RATE_LIMIT', DEFAULT_RATE_LIMITS.topUp.max) },
  };
}

function loginLimitsFromEnv(env: NodeJS.ProcessEnv): LoginLimitConfig {
  return {
    perAccount: {
      ...DEFAULT_LOGIN_LIMITS.perAccount,
      max: wholeNumberFromEnv(env, 'LOGIN_ACCOUNT_RATE_LIMIT', DEFAULT_LOGIN_LIMITS.perAccount.max),
    },
    perIp: { ...DEFAULT_LOGIN_LIMITS.perIp, max: wholeNumberFromEnv(env, 'LOGIN_IP_RATE_LIMIT', DEFAULT_LOGIN_LIMITS.perIp.max) },
  };
}
