// The runtime settings: defaults from common/options.ts, overlaid with the rows
// in the database, cached in memory and validated before anything is written.
//
// Several nodes may share one database. Each node re-reads the table every few
// seconds (SYNC_FREQUENCY), so they converge without Redis; with Redis a write
// is also announced on a channel and the other nodes reload at once.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import {
  JSON_OPTION_NAMES,
  OPTION_SPECS,
  isOptionKey,
  isSafeLink,
  isUrlOption,
  isValidJsonOption,
  parseToggle,
  type OptionKey,
} from '../../common/options';
import type { Database } from '../db/database';
import { loadOptionRows, saveOption } from '../repositories/options';
import { parseStatusList } from '../../common/routing';
import { isTimeZone } from '../../common/budgets';

export class OptionError extends Error {}

/** The Redis channel on which nodes announce option writes. */
export const OPTION_CHANNEL = 'switchboard:options';

/** Checks a value against its key's kind; returns the normalised string or throws OptionError. */
export function validateOption(key: OptionKey, raw: string): string {
  const spec = OPTION_SPECS[key];
  switch (spec.kind) {
    case 'toggle':
      return validateToggle(key, raw);
    case 'number':
      return validateNumber(key, raw);
    case 'json':
      return validateJson(key, raw);
    case 'list':
      return validateList(key, raw);
    default:
      return validateText(key, raw);
  }
}

function validateToggle(key: OptionKey, raw: string): string {
  if (raw !== 'true' && raw !== 'false') throw new OptionError(`${key} must be "true" or "false"`);
  return raw;
}

function validateNumber(key: OptionKey, raw: string): string {
  const trimmed = raw.trim();
  if (trimmed === '' || !Number.isFinite(Number(trimmed))) throw new OptionError(`${key} must be a number`);
  if (Number(trimmed) < 0) throw new OptionError(`${key} must not be negative`);
  return trimmed;
}

function validateJson(key: OptionKey, raw: string): string {
  if (key === 'ModelFallbacks' && !isValidJsonOption(key, raw)) {
    throw new OptionError(
      'model fallbacks must be a JSON object of groups ("*" for all), each mapping a model to a list of up to 10 other models',
    );
  }
  if (!isValidJsonOption(key, raw)) throw new OptionError(`${JSON_OPTION_NAMES[key] ?? key} is not a valid JSON string`);
  return raw;
}

/** A comma-separated list: trimmed items, no empty ones, no repeats. */
function validateList(key: OptionKey, raw: string): string {
  if (key === 'RetryableStatusCodes' && !parseStatusList(raw))
    throw new OptionError('retryable statuses must be HTTP statuses or ranges, such as 408,429,500-599');
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item, index, all) => item !== '' && all.indexOf(item) === index)
    .join(',');
}

/** Free text, but for the time zone (a zone name or empty) and the links (http(s) or a path here). */
function validateText(key: OptionKey, raw: string): string {
  if (key === 'TimeZone' && raw.trim() !== '' && !isTimeZone(raw.trim()))
    throw new OptionError(`TimeZone must be a time zone name such as Asia/Shanghai or UTC, or empty for the server's`);
  if (key === 'TimeZone') return raw.trim();
  if (isUrlOption(key) && !isSafeLink(raw)) throw new OptionError(`${key} must be an http(s) address or a path on this site`);
  return isUrlOption(key) ? raw.trim() : raw;
}

export interface OptionSyncSettings {
  /** Seconds between reloads of the whole table; 0 turns polling off. */
  intervalSeconds: number;
  redis?: Redis;
  onError: (error: unknown) => void;
}

export class OptionStore {
  private readonly values = new Map<OptionKey, string>();
  private readonly parsedJson = new Map<OptionKey, Record<string, number>>();
  /** Counts finished local writes, so a reload that read the table before a write cannot undo it. */
  private writes = 0;
  private readonly writtenAt = new Map<OptionKey, number>();
  private readonly writing = new Map<OptionKey, number>();
  private readonly nodeId = randomUUID();
  private publisher?: Redis;
  private subscriber?: Redis;
  private timer?: NodeJS.Timeout;

  constructor(private readonly db: Kysely<Database>) {
    for (const key of Object.keys(OPTION_SPECS) as OptionKey[]) this.values.set(key, OPTION_SPECS[key].default);
  }

  /** Re-reads every stored row over the defaults. Rows with invalid values are ignored, not applied. */
  async reload(): Promise<void> {
    const startedAt = this.writes;
    for (const row of await loadOptionRows(this.db)) {
      if (!isOptionKey(row.key)) continue;
      // written here while we were reading: our value is newer than the row
      if (this.writing.has(row.key) || (this.writtenAt.get(row.key) ?? 0) > startedAt) continue;
      try {
        this.apply(row.key, validateOption(row.key, row.value));
      } catch {
        // a bad stored value keeps the default rather than poisoning prices
      }
    }
  }

  private apply(key: OptionKey, value: string): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    this.parsedJson.delete(key);
  }

  get(key: OptionKey): string {
    return this.values.get(key) ?? OPTION_SPECS[key].default;
  }

  bool(key: OptionKey): boolean {
    return parseToggle(this.get(key));
  }

  number(key: OptionKey): number {
    const value = Number(this.get(key));
    return Number.isFinite(value) ? value : Number(OPTION_SPECS[key].default);
  }

  json(key: OptionKey): Record<string, number> {
    let parsed = this.parsedJson.get(key);
    if (!parsed) {
      parsed = JSON.parse(this.get(key)) as Record<string, number>;
      this.parsedJson.set(key, parsed);
    }
    return parsed;
  }

  /**
   * Validates, writes to the database, updates the cache and tells the other
   * nodes. Nothing is written when validation fails.
   */
  async set(key: OptionKey, raw: string): Promise<void> {
    const value = validateOption(key, raw);
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    try {
      await saveOption(this.db, key, value);
      this.apply(key, value);
      this.writes += 1;
      this.writtenAt.set(key, this.writes);
    } finally {
      const left = (this.writing.get(key) ?? 1) - 1;
      if (left > 0) this.writing.set(key, left);
      else this.writing.delete(key);
    }
    // best effort: a node that misses the message still converges at its next poll
    await this.publisher?.publish(OPTION_CHANNEL, JSON.stringify({ node: this.nodeId, key })).catch(() => undefined);
  }

  /** Starts following writes made by other nodes: the periodic reload and, with Redis, the change channel. */
  async startSync({ intervalSeconds, redis, onError }: OptionSyncSettings): Promise<void> {
    const reloadQuietly = () => this.reload().catch(onError);
    if (intervalSeconds > 0) {
      this.timer = setInterval(() => void reloadQuietly(), intervalSeconds * 1000);
      this.timer.unref();
    }
    if (!redis) return;
    this.publisher = redis;
    // A connection in subscriber mode can run no other command, so it gets its
    // own. Unlike the main client it queues its SUBSCRIBE while Redis is away,
    // so a node started during an outage subscribes once Redis answers; after
    // that the client subscribes again by itself on every reconnection.
    const subscriber = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
    this.subscriber = subscriber;
    // the main client already reports an outage; the periodic reload covers it
    subscriber.on('error', () => undefined);
    let connectedBefore = false;
    subscriber.on('ready', () => {
      // announcements sent while this node was cut off are lost: catch up at once
      if (connectedBefore) void reloadQuietly();
      connectedBefore = true;
    });
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== OPTION_CHANNEL) return;
      try {
        if ((JSON.parse(message) as { node?: string }).node === this.nodeId) return;
      } catch {
        // an unreadable announcement still means something changed
      }
      void reloadQuietly();
    });
    const subscribed = subscriber.subscribe(OPTION_CHANNEL).catch(onError);
    // with Redis up, changes are followed from the moment the node starts
    if (redis.status === 'ready') await subscribed;
  }

  async stopSync(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.publisher = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (!subscriber) return;
    // a QUIT sent to a Redis that is away would wait in the offline queue
    if (subscriber.status === 'ready') await subscriber.quit().catch(() => subscriber.disconnect());
    else subscriber.disconnect();
  }
}
