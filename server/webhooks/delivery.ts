// The delivery loop: every node polls for due deliveries and claims each with
// a conditional UPDATE (only a row nobody holds, or whose claim expired), so
// nodes sharing a database send every row once; the node that claimed a row
// sends it, then writes the outcome under its own claim. A 2xx answer ends a
// delivery; anything else (another status, a refused connection, a timeout)
// schedules the next attempt after the next delay of the retry schedule, and
// after the last one the delivery is failed (the console can redeliver it).
// Webhook URLs are set by admins: the request goes wherever they point, with
// no redirect followed and a deadline on the whole exchange.
import type { Kysely } from 'kysely';
import { request } from 'undici';
import type { Database } from '../db/database';
import type { WebhookSettings } from '../config';
import type { WebhookDeliveryStatus } from '../../common/webhooks';
import {
  claimDelivery,
  deleteFinishedDeliveries,
  dueDeliveries,
  findWebhook,
  recordDeliveryOutcome,
  type WebhookDeliveryRow,
} from '../repositories/webhooks';
import { webhookSignature } from './signing';

const PRUNE_EVERY_MS = 3_600_000;

/** Deletes finished deliveries older than `days` (pending ones stay, whatever their age); resolves to how many. */
export async function pruneDeliveries(db: Kysely<Database>, days: number, nowMs = Date.now()): Promise<number> {
  if (days <= 0) return 0;
  return deleteFinishedDeliveries(db, Math.floor(nowMs / 1000) - days * 86_400);
}

const BATCH = 16;
const ERROR_MAX = 500;

export interface DeliveryLoop {
  /** One pass: claims and sends what is due; resolves to how many were sent. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

type Outcome = { statusCode: number; error: string };

async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Outcome> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // the answer is drained (so the connection can be reused) and never kept: a URL pointed at an internal
    // address would otherwise let whoever reads the log read what that address answers
    await response.body.dump();
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return { statusCode: response.statusCode, error: ok ? '' : `HTTP ${response.statusCode}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const message =
      (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError'
        ? `timed out after ${timeoutMs} ms`
        : (error as Error).message;
    return { statusCode: 0, error: cause ? `${message} (${cause})` : message };
  }
}

async function deliver(db: Kysely<Database>, row: WebhookDeliveryRow, nodeId: string, settings: WebhookSettings): Promise<void> {
  const webhook = await findWebhook(db, Number(row.webhook_id));
  const attempts = Number(row.attempts) + 1;
  let outcome: Outcome;
  if (!webhook) outcome = { statusCode: 0, error: 'the webhook was deleted' };
  else if (Number(webhook.enabled) !== 1 && row.event_type !== 'webhook.test')
    outcome = { statusCode: 0, error: 'the webhook is disabled' };
  else {
    const timestamp = Math.floor(Date.now() / 1000);
    outcome = await post(
      webhook.url,
      {
        'content-type': 'application/json',
        'user-agent': 'Switchboard-Webhook/1',
        'x-switchboard-signature': webhookSignature(webhook.secret, timestamp, row.payload),
        'x-switchboard-event': row.event_type,
        'x-switchboard-event-id': row.event_id,
        'x-switchboard-delivery': String(row.id),
      },
      row.payload,
      settings.timeoutMs,
    );
  }
  const delivered = outcome.statusCode >= 200 && outcome.statusCode < 300;
  const giveUp =
    !delivered &&
    (!webhook || attempts > settings.retryDelaysMs.length || (Number(webhook.enabled) !== 1 && row.event_type !== 'webhook.test'));
  const now = Date.now();
  await recordDeliveryOutcome(db, Number(row.id), nodeId, {
    attempts,
    status: deliveryStatus(delivered, giveUp),
    lastStatusCode: outcome.statusCode,
    lastError: outcome.error ? outcome.error.slice(0, ERROR_MAX) : null,
    nextAttemptAt: delivered || giveUp ? 0 : now + settings.retryDelaysMs[attempts - 1],
    deliveredTime: delivered ? Math.floor(now / 1000) : 0,
  });
}

/** Where an attempt leaves its delivery: delivered, failed for good, or pending its next attempt. */
function deliveryStatus(delivered: boolean, giveUp: boolean): WebhookDeliveryStatus {
  if (delivered) return 'delivered';
  return giveUp ? 'failed' : 'pending';
}

/** What the delivery loop works with: the database, this node's id (its claims) and a log. */
export interface DeliveryLoopDeps {
  db: Kysely<Database>;
  nodeId: string;
  log: { warn: (object: object, message: string) => void };
}

/** Starts polling for due deliveries; stop() (called on the app's close) ends it after the pass under way. */
export function startDeliveryLoop(deps: DeliveryLoopDeps, settings: WebhookSettings): DeliveryLoop {
  const { db, nodeId, log } = deps;
  // a claim outlives any attempt, so a live node never loses a row it is sending
  const claimMs = settings.timeoutMs * 3 + 30_000;
  let running: Promise<number> | undefined;
  let stopped = false;

  const pass = async (): Promise<number> => {
    const now = Date.now();
    const due = await dueDeliveries(db, now, BATCH);
    const mine: WebhookDeliveryRow[] = [];
    for (const row of due) if (await claimDelivery(db, Number(row.id), nodeId, now, claimMs)) mine.push(row);
    await Promise.all(mine.map((row) => deliver(db, row, nodeId, settings)));
    return mine.length;
  };

  // every node prunes about hourly; deleting what another node just deleted is harmless
  let prunedAt = Date.now();
  const runOnce = (): Promise<number> => {
    running ??= pass()
      .then(async (sent) => {
        if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneDeliveries(db, settings.logDays);
        }
        return sent;
      })
      .finally(() => (running = undefined));
    return running;
  };

  const timer = setInterval(() => {
    if (stopped || running) return;
    runOnce().catch((error: unknown) => log.warn({ err: error }, 'webhook delivery pass failed'));
  }, settings.pollIntervalMs);
  timer.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => 0);
    },
  };
}
