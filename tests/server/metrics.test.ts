// GET /metrics after real relayed calls through the OpenAI emulator: request
// counts by operation, protocol, status, outcome, model and channel; tokens
// and quota equal to what the consume logs say; latency and time-to-first-token
// histograms; upstream errors by channel and kind; open streams while one is
// open; ledger batches; the database pool on PostgreSQL and Redis' state; no
// label from text a client chose; the bearer token; off when disabled.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../support/app';
import { databaseTargets, REDIS_URL, redisAvailable, type TestDatabase } from '../support/databases';
import { startRelayHarness, type RelayHarness } from './relay/harness';
import { freePort } from '../e2e/support/gateway';
import { AggregatorRegistry } from 'prom-client';
import { metricsRegistryOf } from '../../server/plugins/metrics';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus' text format, sample lines only. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]] = label[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

const pick = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  pick(samples, name, labels).reduce((sum, sample) => sum + sample.value, 0);

const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'count these few words please' }] };

async function scrape(baseUrl: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parseMetrics(await response.text());
}

async function pollUntil(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}

describe('metrics after relayed calls', () => {
  let harness: RelayHarness;
  let channel: number;
  let failing: number;

  beforeAll(async () => {
    harness = await startRelayHarness();
    channel = await harness.addChannel({ name: 'emu', key: 'sk-good', priority: 10 });
  });
  afterAll(() => harness?.close());

  it('counts requests, tokens and quota as the consume logs do, with latency and first-token histograms', async () => {
    const whole = await harness.post('/v1/chat/completions', chat);
    expect(whole.status).toBe(200);
    await whole.json();
    const streamed = await harness.post('/v1/chat/completions', { ...chat, stream: true, stream_options: { include_usage: true } });
    expect(await streamed.text()).toContain('[DONE]');
    const embedded = await harness.post('/v1/embeddings', { model: 'text-embedding-ada-002', input: 'alpha beta' });
    await embedded.json();
    // an Anthropic client, its stream translated from the OpenAI channel's
    const messages = await fetch(`${harness.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-4', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'one two' }] }),
    });
    expect(await messages.text()).toContain('message_stop');
    await harness.settled();

    const samples = await scrape(harness.baseUrl);
    const requests = { operation: 'chat', protocol: 'openai', status: '200', outcome: 'settled', model: 'gpt-4', channel: String(channel) };
    expect(total(samples, 'switchboard_relay_requests_total', requests)).toBe(2);
    expect(
      total(samples, 'switchboard_relay_requests_total', {
        operation: 'embeddings',
        model: 'text-embedding-ada-002',
        channel: String(channel),
      }),
    ).toBe(1);

    // what the ledger wrote is what the metrics counted
    const logs = await harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).execute();
    const sum = (model: string, column: 'prompt_tokens' | 'completion_tokens' | 'quota') =>
      logs.filter((row) => row.model_name === model).reduce((acc, row) => acc + Number(row[column]), 0);
    for (const model of ['gpt-4', 'text-embedding-ada-002']) {
      expect(total(samples, 'switchboard_relay_tokens_total', { model, channel: String(channel), type: 'prompt' })).toBe(
        sum(model, 'prompt_tokens'),
      );
      expect(total(samples, 'switchboard_relay_tokens_total', { model, channel: String(channel), type: 'completion' })).toBe(
        sum(model, 'completion_tokens'),
      );
      expect(total(samples, 'switchboard_relay_quota_total', { model, channel: String(channel) })).toBe(sum(model, 'quota'));
    }
    expect(sum('gpt-4', 'quota')).toBeGreaterThan(0);

    expect(total(samples, 'switchboard_relay_request_duration_seconds_count', { operation: 'chat', protocol: 'openai' })).toBe(2);
    expect(total(samples, 'switchboard_relay_request_duration_seconds_bucket', { operation: 'chat', protocol: 'openai', le: '+Inf' })).toBe(
      2,
    );
    // only the stream has a first token
    expect(total(samples, 'switchboard_relay_time_to_first_token_seconds_count', { operation: 'chat', protocol: 'openai' })).toBe(1);
    expect(
      total(samples, 'switchboard_relay_requests_total', {
        operation: 'chat',
        protocol: 'anthropic',
        status: '200',
        outcome: 'settled',
        model: 'gpt-4',
      }),
    ).toBe(1);
    expect(total(samples, 'switchboard_relay_time_to_first_token_seconds_count', { operation: 'chat', protocol: 'anthropic' })).toBe(1);
    expect(total(samples, 'switchboard_relay_open_streams')).toBe(0);

    // the settlements went in batches, each timed
    expect(total(samples, 'switchboard_ledger_batch_size_count', { queue: 'settlements' })).toBeGreaterThan(0);
    expect(total(samples, 'switchboard_ledger_batch_size_sum', { queue: 'settlements' })).toBeGreaterThanOrEqual(3);
    expect(total(samples, 'switchboard_ledger_write_seconds_count', { queue: 'settlements' })).toBe(
      total(samples, 'switchboard_ledger_batch_size_count', { queue: 'settlements' }),
    );
    // the console API's requests, by route pattern
    expect(total(samples, 'switchboard_http_requests_total', { method: 'POST', route: '/api/channel/', status: '200' })).toBeGreaterThan(0);
    // the process' own series
    expect(pick(samples, 'process_resident_memory_bytes').length + pick(samples, 'nodejs_heap_size_used_bytes').length).toBeGreaterThan(0);
  });

  it('shows a stream as open while it runs, and closed after', async () => {
    const slow = harness.post('/v1/chat/completions', { ...chat, stream: true, emulator: { chunks: 40, delay_ms: 50 } });
    await pollUntil('the stream counted as open', async () => total(await scrape(harness.baseUrl), 'switchboard_relay_open_streams') === 1);
    const answer = await slow;
    await answer.text();
    await pollUntil(
      'the stream counted as closed',
      async () => total(await scrape(harness.baseUrl), 'switchboard_relay_open_streams') === 0,
    );
  });

  it('counts upstream errors by channel and kind', async () => {
    failing = await harness.addChannel({ name: 'down', key: 'sk-down', priority: 100 });
    await harness.app.ctx.options.set('RetryTimes', '1');
    const response = await harness.post('/v1/chat/completions', chat);
    // the failing channel first (higher priority), then the good one answers
    expect(response.status).toBe(200);
    await response.json();
    await harness.app.ctx.options.set('RetryTimes', '0');
    const busy = await harness.addChannel({ name: 'busy', key: 'sk-busy', priority: 200 });
    expect((await harness.post('/v1/chat/completions', chat)).status).toBe(429);
    const samples = await scrape(harness.baseUrl);
    expect(total(samples, 'switchboard_upstream_errors_total', { channel: String(failing), kind: 'server_error' })).toBe(1);
    expect(total(samples, 'switchboard_upstream_errors_total', { channel: String(busy), kind: 'rate_limited' })).toBe(1);
    expect(
      total(samples, 'switchboard_relay_requests_total', { status: '429', outcome: 'refused', channel: String(busy), model: 'gpt-4' }),
    ).toBe(1);
  });

  it('never turns what a client wrote into a label', async () => {
    const invented = `evil-${randomBytes(6).toString('hex')}`;
    const response = await harness.post('/v1/chat/completions', { ...chat, model: invented }, undefined, {
      'x-request-id': `${invented}-id`,
    });
    expect(response.status).toBe(403);
    const text = await (await fetch(`${harness.baseUrl}/metrics`)).text();
    expect(text).not.toContain(invented);
    const samples = parseMetrics(text);
    expect(total(samples, 'switchboard_relay_requests_total', { status: '403', outcome: 'refused', model: '' })).toBe(1);
  });
});

describe('several processes', () => {
  it("give a cluster master registries whose series prom-client's AggregatorRegistry sums", async () => {
    const workers = [await buildTestApp(), await buildTestApp()];
    try {
      for (const [index, worker] of workers.entries()) {
        for (let call = 0; call <= index; call += 1)
          expect((await worker.inject({ method: 'GET', url: '/api/status' })).statusCode).toBe(200);
        // a ledger batch of 3 items in one worker, of 40 in the other
        worker.ctx.metrics!.batchWritten('logs', index === 0 ? 3 : 40, 2, true);
      }
      const perWorker = await Promise.all(workers.map((worker) => metricsRegistryOf(worker)!.getMetricsAsJSON()));
      const merged = parseMetrics(await AggregatorRegistry.aggregate(perWorker).metrics());
      expect(total(merged, 'switchboard_http_requests_total', { method: 'GET', route: '/api/status', status: '200' })).toBe(3);
      // histograms merge bucket by bucket
      expect(total(merged, 'switchboard_ledger_batch_size_count', { queue: 'logs' })).toBe(2);
      expect(total(merged, 'switchboard_ledger_batch_size_sum', { queue: 'logs' })).toBe(43);
      expect(total(merged, 'switchboard_ledger_batch_size_bucket', { queue: 'logs', le: '5' })).toBe(1);
      expect(total(merged, 'switchboard_ledger_batch_size_bucket', { queue: 'logs', le: '50' })).toBe(2);
      expect(pick(merged, 'switchboard_relay_open_streams')).toEqual([{ name: 'switchboard_relay_open_streams', labels: {}, value: 0 }]);
    } finally {
      for (const worker of workers) await worker.close();
    }
  });
});

describe('metrics access', () => {
  let app: FastifyInstance;
  afterAll(() => app?.close());

  it('asks for the bearer token when METRICS_TOKEN is set, and is open otherwise', async () => {
    app = await buildTestApp({ metricsToken: 'scrape-secret' });
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-secreT' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['www-authenticate']).toContain('Bearer');
    expect(wrong.body).not.toContain('switchboard_');
    const right = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-secret' } });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('# TYPE switchboard_relay_requests_total counter');
    await app.close();

    app = await buildTestApp();
    const open = await app.inject({ method: 'GET', url: '/metrics' });
    expect(open.statusCode).toBe(200);
    expect(open.body).toContain('switchboard_relay_open_streams 0');
  });

  it('is absent when METRICS_ENABLED is off', async () => {
    await app?.close();
    app = await buildTestApp({ metricsEnabled: false });
    // no such route: the path falls to the console's pages (503 here, where no console is built)
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).not.toBe(200);
    expect(response.body).not.toContain('switchboard_');
    expect(app.ctx.metrics).toBeUndefined();
  });
});

const redisUp = await redisAvailable('metrics');
const postgres = (await databaseTargets('metrics')).find((target) => target.name === 'postgres')!;

describe('database pool and Redis state', () => {
  it.runIf(postgres.available)('reports the PostgreSQL pool', async () => {
    const database: TestDatabase = await postgres.create();
    const app = await buildTestApp({}, database.config);
    try {
      const samples = parseMetrics((await app.inject({ method: 'GET', url: '/metrics' })).body);
      const open = pick(samples, 'switchboard_db_pool_connections', { state: 'open' });
      expect(open).toHaveLength(1);
      expect(open[0].value).toBeGreaterThanOrEqual(1);
      expect(pick(samples, 'switchboard_db_pool_connections', { state: 'waiting' })).toHaveLength(1);
    } finally {
      await app.close();
      await database.drop();
    }
  });

  it.runIf(redisUp)('reports Redis up when it answers, and down when it does not', async () => {
    const reachable = await buildTestApp({ redisUrl: REDIS_URL });
    try {
      expect(total(parseMetrics((await reachable.inject({ method: 'GET', url: '/metrics' })).body), 'switchboard_redis_up')).toBe(1);
    } finally {
      await reachable.close();
    }
    const nowhere = await buildTestApp({ redisUrl: `redis://127.0.0.1:${await freePort()}` });
    try {
      const samples = parseMetrics((await nowhere.inject({ method: 'GET', url: '/metrics' })).body);
      expect(pick(samples, 'switchboard_redis_up')).toEqual([{ name: 'switchboard_redis_up', labels: {}, value: 0 }]);
    } finally {
      await nowhere.close();
    }
  });
});
