// The delivery loop: every node polls for due deliveries and claims each with
// a conditional UPDATE (only a row nobody holds, or whose claim expired), so
// nodes sharing a database send every row once; the node that claimed a row
// sends it, then writes the outcome under its own claim. A 2xx answer ends a
// delivery; anything else (another status, a refused connection, a timeout)
// schedules the next attempt after the next delay of the retry schedule, and
// after the last one the delivery is failed (the console can redeliver it).
// Webhook URLs are set by admins: the request goes wherever they point, with
// no redirect followed and a deadline on the whole exchange.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { request } from 'undici';
import type { Database } from '../db/database';
import type { WebhookSettings } from '../config';
import { findWebhook, type WebhookDeliveryRow } from '../repositories/webhooks';
import { webhookSignature } from './signing';

const PRUNE_EVERY_MS = 3_600_000;

/** Deletes finished deliveries older than `days` (pending ones stay, whatever their age); resolves to how many. */
export async function pruneDeliveries(db: Kysely<Database>, days: number, nowMs = Date.now()): Promise<number> {
  if (days <= 0) return 0;
  const deleted = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '!=', 'pending')
    .where('created_time', '<', Math.floor(nowMs / 1000) - days * 86_400)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
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

/** Claims a due delivery for `nodeId`; true when this node got it. */
async function claim(db: Kysely<Database>, id: number, nodeId: string, now: number, claimMs: number): Promise<boolean> {
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_by: nodeId, claim_expires_at: now + claimMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<', now)]))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
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
  await db
    .updateTable('webhook_deliveries')
    .set({
      attempts,
      status: delivered ? 'delivered' : giveUp ? 'failed' : 'pending',
      last_status_code: outcome.statusCode,
      last_error: outcome.error ? outcome.error.slice(0, ERROR_MAX) : null,
      next_attempt_at: delivered || giveUp ? 0 : now + settings.retryDelaysMs[attempts - 1],
      delivered_time: delivered ? Math.floor(now / 1000) : 0,
      claimed_by: null,
      claim_expires_at: 0,
    })
    .where('id', '=', Number(row.id))
    .where('claimed_by', '=', nodeId)
    .execute();
}

/** Starts polling for due deliveries; app.close() stops it after the pass under way. */
export function startDeliveryLoop(app: FastifyInstance, settings: WebhookSettings): DeliveryLoop {
  const { db, nodeId } = app.ctx;
  // a claim outlives any attempt, so a live node never loses a row it is sending
  const claimMs = settings.timeoutMs * 3 + 30_000;
  let running: Promise<number> | undefined;
  let stopped = false;

  const pass = async (): Promise<number> => {
    const now = Date.now();
    const due = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<', now)]))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(BATCH)
      .execute();
    const mine: WebhookDeliveryRow[] = [];
    for (const row of due) if (await claim(db, Number(row.id), nodeId, now, claimMs)) mine.push(row);
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
    runOnce().catch((error: unknown) => app.log.warn({ err: error }, 'webhook delivery pass failed'));
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
