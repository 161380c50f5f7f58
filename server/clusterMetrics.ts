// /metrics under WORKERS=N: a scrape lands on one worker (the port is shared),
// which asks the primary for everyone's series; the primary collects each
// live worker's registry as JSON over the cluster's IPC channel and merges
// them with prom-client's AggregatorRegistry (counters and histogram buckets
// summed; gauges as each series declares). A worker that does not answer in
// time is left out of that scrape rather than holding it up, and a worker
// that cannot reach the primary answers with its own series.
import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

type Gathered = MetricObjectWithValues<MetricValue<string>>[];

/** Messages between a worker and the primary; the `sb` tag keeps them apart from any other IPC. */
type Message =
  | { sb: 'metrics-gather'; id: string }
  | { sb: 'metrics-collect'; id: string }
  | { sb: 'metrics-part'; id: string; metrics: Gathered }
  | { sb: 'metrics-result'; id: string; text: string; workers: number };

const isMessage = (value: unknown): value is Message =>
  typeof value === 'object' && value !== null && typeof (value as { sb?: unknown }).sb === 'string';

/** How long the primary waits for the workers' parts, and a worker for the primary's answer. */
const COLLECT_MS = 2_000;
const ANSWER_MS = 4_000;

/** Primary side: answers a worker's gather by collecting every live worker's part. */
export function serveClusterMetrics(): void {
  cluster.on('message', (asker: Worker, message: unknown) => {
    if (!isMessage(message) || message.sb !== 'metrics-gather') return;
    void collect().then(async ({ parts, workers }) => {
      const text = await AggregatorRegistry.aggregate(parts).metrics();
      if (asker.isConnected()) asker.send({ sb: 'metrics-result', id: message.id, text, workers } satisfies Message);
    });
  });
}

async function collect(): Promise<{ parts: Gathered[]; workers: number }> {
  const live = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => Boolean(worker?.isConnected()));
  const id = randomUUID();
  const parts: Gathered[] = [];
  await new Promise<void>((resolve) => {
    let waiting = live.length;
    if (waiting === 0) return resolve();
    const timer = setTimeout(finish, COLLECT_MS);
    function finish() {
      clearTimeout(timer);
      for (const worker of live) worker.off('message', onPart);
      resolve();
    }
    function onPart(message: unknown) {
      if (!isMessage(message) || message.sb !== 'metrics-part' || message.id !== id) return;
      parts.push(message.metrics);
      if ((waiting -= 1) === 0) finish();
    }
    for (const worker of live) {
      worker.on('message', onPart);
      worker.send({ sb: 'metrics-collect', id } satisfies Message);
    }
  });
  return { parts, workers: parts.length };
}

/** Worker side: hands this worker's series to the primary when it collects. */
export function offerWorkerMetrics(registry: Registry): void {
  process.on('message', (message: unknown) => {
    if (!isMessage(message) || message.sb !== 'metrics-collect') return;
    void registry.getMetricsAsJSON().then((metrics) => process.send?.({ sb: 'metrics-part', id: message.id, metrics } satisfies Message));
  });
}

/** Worker side: the whole cluster's series, or this worker's own when the primary does not answer in time. */
export function clusterMetricsText(registry: Registry): Promise<{ text: string; workers: number }> {
  const id = randomUUID();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      process.off('message', onResult);
      void registry.metrics().then((text) => resolve({ text, workers: 1 }));
    }, ANSWER_MS);
    function onResult(message: unknown) {
      if (!isMessage(message) || message.sb !== 'metrics-result' || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onResult);
      resolve({ text: message.text, workers: message.workers });
    }
    process.on('message', onResult);
    process.send?.({ sb: 'metrics-gather', id } satisfies Message);
  });
}

/** Whether /metrics should gather the cluster's series (this process is a cluster worker). */
export const inCluster = () => cluster.isWorker;
