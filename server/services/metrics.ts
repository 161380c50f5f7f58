// GET /metrics: the node's series in Prometheus' text format (prom-client).
//
// The relay's hot path must not pay for them: a finished request costs one
// Map lookup by its labels and a few additions into plain numbers here (its
// latency's bucket found by a short loop); prom-client only reads those
// numbers when Prometheus scrapes. So the relay's series are small classes of
// our own that prom-client's Registry renders like its own metrics (a `get()`
// in its format, an `aggregator` for the cluster's AggregatorRegistry).
//
// Label values are bounded: models only once the gateway admitted them (a
// model it knows a price for, else ""), channels by their id, statuses,
// operations and protocols from fixed sets. No text a client chose becomes a
// label.
//
// One registry per app (so per process): a cluster master can ask each
// worker for `metricsRegistryOf(app).getMetricsAsJSON()` (plugins/metrics.ts)
// and merge them with prom-client's AggregatorRegistry.aggregate. The plugin
// also hooks these series to the relay, the bookkeeping and Fastify's answers.
import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { clusterMetricsText, inCluster } from '../clusterMetrics';
import type { PoolState } from '../db/database';

type Labels = Record<string, string | number>;

// What the series read of a finished relayed call, written out here because services sit below the relay: the
// relay's RelayOutcome (relay/context.ts) and RelayCall (relay/pipeline.ts) have these shapes.
/** How a relayed request ended. */
type RelayOutcome = 'settled' | 'refused' | 'aborted';
/** The fields of a relayed call the series count. */
interface FinishedCall {
  route: { inbound: { protocol: string } };
  response: { statusCode: number };
  bill: { promptTokens: number; completionTokens: number; charge: number } | undefined;
  firstChunkAt: number;
}
type Sample = { labels: Labels; value: number; metricName?: string };

/** A counter fed by plain additions; prom-client reads it when scraped. */
class SummedCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  add(key: string, labels: () => Labels, value = 1): void {
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: labels(), value: 0 };
      this.series.set(key, entry);
    }
    entry.value += value;
  }

  /** Series computed at scrape time from other counts. */
  collectFrom: (() => Iterable<{ labels: Labels; value: number }>) | undefined;

  get() {
    const values: Sample[] = [...(this.collectFrom?.() ?? this.series.values())].map(({ labels, value }) => ({ labels, value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** One label set's buckets: counts per bucket (not cumulative), their sum and count. */
class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    let index = 0;
    while (index < bounds.length && value > bounds[index]) index += 1;
    if (index < bounds.length) this.counts[index] += 1;
    this.sum += value;
    this.count += 1;
  }
}

class CheapHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** The series of a label set, made on first use; keep it to observe without a lookup. */
  seriesOf(key: string, labels: () => Labels): HistogramSeries {
    let entry = this.series.get(key);
    if (!entry) {
      entry = new HistogramSeries(labels(), this.bounds);
      this.series.set(key, entry);
    }
    return entry;
  }

  get() {
    const values: Sample[] = [];
    for (const entry of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += entry.counts[index];
        values.push({ labels: { ...entry.labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...entry.labels, le: '+Inf' }, value: entry.count, metricName: `${this.name}_bucket` });
      values.push({ labels: entry.labels, value: entry.sum, metricName: `${this.name}_sum` });
      values.push({ labels: entry.labels, value: entry.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FIRST_TOKEN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];
const WRITE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What an upstream failure was, for `switchboard_upstream_errors_total{kind}`. */
export type UpstreamErrorKind =
  'timeout' | 'busy' | 'network' | 'broke_off' | 'dead_key' | 'rate_limited' | 'server_error' | 'client_error';

const OUTCOMES: readonly RelayOutcome[] = ['settled', 'refused', 'aborted'];

/** A relayed request's counts, kept per label set. */
interface RelaySeries {
  labels: Labels;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  quota: number;
  duration: HistogramSeries;
  firstToken: HistogramSeries;
}

export interface MetricsSources {
  dialect: string;
  poolState?: () => PoolState;
  redis?: Redis;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  /** Every relay series, for the scrape. */
  private readonly relaySeries: RelaySeries[] = [];
  /**
   * The same series for the hot path, by route, model, channel, then status and outcome: nested maps
   * of keys at hand, as a joined string key cost a string build and hash per request (~25x the lookups).
   */
  private readonly seriesByRoute = new Map<object, Map<string, Map<number, Map<number, RelaySeries>>>>();
  private readonly requests = new SummedCounter(
    'switchboard_relay_requests_total',
    'Relayed requests by operation, client protocol, HTTP status, outcome, model and channel',
  );
  private readonly tokens = new SummedCounter(
    'switchboard_relay_tokens_total',
    'Tokens billed, by model, channel and type (prompt or completion)',
  );
  private readonly quota = new SummedCounter('switchboard_relay_quota_total', 'Quota charged, by model and channel');
  private readonly duration = new CheapHistogram(
    'switchboard_relay_request_duration_seconds',
    'Relayed request duration, until the answer ended',
    LATENCY_BUCKETS,
  );
  private readonly firstToken = new CheapHistogram(
    'switchboard_relay_time_to_first_token_seconds',
    'Time from the request to its first streamed chunk',
    FIRST_TOKEN_BUCKETS,
  );
  private readonly upstreamErrors = new SummedCounter('switchboard_upstream_errors_total', 'Failed upstream attempts, by channel and kind');
  private readonly http = new SummedCounter(
    'switchboard_http_requests_total',
    'Requests Fastify answered (console API, static files, relay routes off the fast path), by method, route and status',
  );
  private readonly batchSize = new CheapHistogram(
    'switchboard_ledger_batch_size',
    'Items per ledger write (settlements with their consume logs, or other logs)',
    BATCH_SIZE_BUCKETS,
  );
  private readonly batchWrite = new CheapHistogram('switchboard_ledger_write_seconds', 'Duration of one ledger batch write', WRITE_BUCKETS);
  private readonly batchFailures = new SummedCounter(
    'switchboard_ledger_write_failures_total',
    'Ledger batch writes that failed (the batch stays queued and is retried)',
  );
  private openStreams = 0;

  constructor(sources: MetricsSources, inFlight: () => number) {
    const { registry } = this;
    collectDefaultMetrics({ register: registry });
    for (const metric of [
      this.requests,
      this.tokens,
      this.quota,
      this.duration,
      this.firstToken,
      this.upstreamErrors,
      this.http,
      this.batchSize,
      this.batchWrite,
      this.batchFailures,
    ]) {
      registry.registerMetric(metric as never);
    }
    // tokens and quota are summed at scrape time from the per-request series
    this.tokens.collectFrom = () =>
      this.sumByModelAndChannel((series) => [
        { type: 'prompt', value: series.promptTokens },
        { type: 'completion', value: series.completionTokens },
      ]);
    this.quota.collectFrom = () => this.sumByModelAndChannel((series) => [{ value: series.quota }]);
    this.requests.collectFrom = () => this.relaySeries.map((series) => ({ labels: series.labels, value: series.requests }));
    const openStreams = () => this.openStreams;
    new Gauge({
      name: 'switchboard_relay_open_streams',
      help: 'Streamed answers being written right now',
      registers: [registry],
      collect() {
        this.set(openStreams());
      },
    });
    new Gauge({
      name: 'switchboard_relay_in_flight',
      help: 'Relayed requests in flight right now',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
    const { poolState, redis } = sources;
    if (poolState) {
      new Gauge({
        name: 'switchboard_db_pool_connections',
        help: `Database pool (${sources.dialect}): open, idle connections and requests waiting for one`,
        labelNames: ['state'],
        registers: [registry],
        collect() {
          const state = poolState();
          this.set({ state: 'open' }, state.total);
          this.set({ state: 'idle' }, state.idle);
          this.set({ state: 'waiting' }, state.waiting);
        },
      });
    }
    if (redis) {
      new Gauge({
        name: 'switchboard_redis_up',
        help: 'Redis: 1 connected and ready, 0 configured but unreachable (absent without Redis)',
        registers: [registry],
        collect() {
          this.set(redis.status === 'ready' ? 1 : 0);
        },
      });
    }
  }

  private *sumByModelAndChannel(parts: (series: RelaySeries) => Array<{ type?: string; value: number }>) {
    const totals = new Map<string, { labels: Labels; value: number }>();
    for (const series of this.relaySeries) {
      // refused before a model was admitted: nothing was billed
      if (series.labels.model === '') continue;
      for (const part of parts(series)) {
        const key = `${series.labels.model}\u0000${series.labels.channel}\u0000${part.type ?? ''}`;
        let total = totals.get(key);
        if (!total) {
          total = {
            labels: part.type
              ? { model: series.labels.model, channel: series.labels.channel, type: part.type }
              : { model: series.labels.model, channel: series.labels.channel },
            value: 0,
          };
          totals.set(key, total);
        }
        total.value += part.value;
      }
    }
    yield* totals.values();
  }

  /** A relayed request is over (the pipeline's afterFinish hook). */
  readonly relayFinished = (
    outcome: RelayOutcome,
    operation: string,
    admission: { model: string } | undefined,
    startedAt: number,
    channelId: number | undefined,
    call: FinishedCall,
  ): void => {
    const { route } = call;
    const status = call.response.statusCode;
    const model = admission?.model ?? '';
    const channel = channelId ?? 0;
    let byModel = this.seriesByRoute.get(route);
    if (!byModel) this.seriesByRoute.set(route, (byModel = new Map<string, Map<number, Map<number, RelaySeries>>>()));
    let byChannel = byModel.get(model);
    if (!byChannel) byModel.set(model, (byChannel = new Map<number, Map<number, RelaySeries>>()));
    let byResult = byChannel.get(channel);
    if (!byResult) byChannel.set(channel, (byResult = new Map<number, RelaySeries>()));
    const result = status * 4 + OUTCOMES.indexOf(outcome);
    let series = byResult.get(result);
    if (!series) {
      const protocol = route.inbound.protocol;
      const timing = `${operation}\u0000${protocol}`;
      const timingLabels = () => ({ operation, protocol });
      series = {
        labels: { operation, protocol, status, outcome, model, channel: channel === 0 ? '' : channel },
        requests: 0,
        promptTokens: 0,
        completionTokens: 0,
        quota: 0,
        duration: this.duration.seriesOf(timing, timingLabels),
        firstToken: this.firstToken.seriesOf(timing, timingLabels),
      };
      byResult.set(result, series);
      this.relaySeries.push(series);
    }
    series.requests += 1;
    const { bill, firstChunkAt } = call;
    if (bill) {
      series.promptTokens += bill.promptTokens;
      series.completionTokens += bill.completionTokens;
      series.quota += bill.charge;
    }
    const now = Date.now();
    series.duration.observe((now - startedAt) / 1000);
    if (firstChunkAt > 0) {
      series.firstToken.observe((firstChunkAt - startedAt) / 1000);
      this.openStreams -= 1;
    }
  };

  /** A streamed answer's first chunk is going out (the pipeline's firstChunk hook). */
  readonly streamOpened = (): void => {
    this.openStreams += 1;
  };

  upstreamError(channelId: number, kind: UpstreamErrorKind): void {
    this.upstreamErrors.add(`${channelId}\u0000${kind}`, () => ({ channel: channelId, kind }));
  }

  httpAnswered(method: string, route: string, status: number): void {
    this.http.add(`${method}\u0000${route}\u0000${status}`, () => ({ method, route, status }));
  }

  batchWritten(queue: string, size: number, milliseconds: number, written: boolean): void {
    const labels = () => ({ queue });
    this.batchSize.seriesOf(queue, labels).observe(size);
    this.batchWrite.seriesOf(queue, labels).observe(milliseconds / 1000);
    if (!written) this.batchFailures.add(queue, labels);
  }
}

/** What /metrics reads of its request (Fastify's): the Authorization header. */
interface MetricsRequest {
  headers: { authorization?: string };
}

/** What it uses of the reply (Fastify's): a status, headers, a content type and the text, chained. */
interface MetricsReply {
  code(statusCode: number): MetricsReply;
  header(name: string, value: string): MetricsReply;
  type(contentType: string): MetricsReply;
  send(payload: string): MetricsReply;
}

/** Bearer-token check for /metrics when METRICS_TOKEN is set (constant time). */
export function metricsAllowed(request: MetricsRequest, token: string | undefined): boolean {
  if (!token) return true;
  const header = request.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7).trim() : '', 'utf8');
  const expected = Buffer.from(token, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Answers GET /metrics: this node's series, or under WORKERS=N every worker's, merged. */
export async function answerMetrics(metrics: GatewayMetrics, request: MetricsRequest, reply: MetricsReply, token: string | undefined) {
  if (!metricsAllowed(request, token)) {
    return reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="metrics"')
      .type('text/plain; charset=utf-8')
      .send('metrics need the bearer token (METRICS_TOKEN)\n');
  }
  // under WORKERS=N the scrape reaches one worker: it answers with every worker's series, merged by the primary
  if (inCluster()) {
    const { text, workers } = await clusterMetricsText(metrics.registry);
    return reply
      .header('cache-control', 'no-store')
      .header('x-switchboard-metrics-workers', String(workers))
      .type(metrics.registry.contentType)
      .send(text);
  }
  const text = await metrics.registry.metrics();
  return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(text);
}
