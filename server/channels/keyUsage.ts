// The tallies of multi-key channels' keys: calls, failures and the last use.
// The relay notes them in memory and they reach the database in one UPDATE
// per key every FLUSH_MS (and when the app closes, or before the key list is
// read), so a relayed call costs no write of its own.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { addChannelKeyUsage } from '../repositories/channelKeys';

const FLUSH_MS = 2000;

/** Where the tallies go and where a failed write is told. */
export interface KeyUsageDeps {
  db: Kysely<Database>;
  log: { warn: (object: object, message: string) => void };
}

interface Tally {
  used: number;
  failed: number;
  lastUsedAt: number;
}

export class ChannelKeyUsage {
  private pending = new Map<number, Tally>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: KeyUsageDeps) {}

  /** One call made with the key; `failed` when the upstream refused it or never answered. */
  note(keyId: number, failed: boolean): void {
    let tally = this.pending.get(keyId);
    if (!tally) {
      tally = { used: 0, failed: 0, lastUsedAt: 0 };
      this.pending.set(keyId, tally);
    }
    tally.used += 1;
    if (failed) tally.failed += 1;
    tally.lastUsedAt = Math.floor(Date.now() / 1000);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** A failure of a call already noted as used (it failed after the note). */
  noteFailure(keyId: number): void {
    const tally = this.pending.get(keyId);
    if (tally) tally.failed += 1;
    else this.note(keyId, true);
  }

  /** Writes what was noted; resolves once it is written (a failed write is logged and its counts dropped). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(async () => {
      for (const [keyId, tally] of batch) {
        try {
          await addChannelKeyUsage(this.deps.db, keyId, tally);
        } catch (error) {
          this.deps.log.warn({ err: error, keyId }, 'could not save the tallies of a channel key');
        }
      }
    });
    return this.flushing;
  }
}

// keyed by the database object, which is one per app (and the root app and its encapsulated route plugins share it)
const usages = new WeakMap<object, ChannelKeyUsage>();

/** The tallies of the app whose database is `deps.db`: the relay notes into them, the key list and the close flush them. */
export function channelKeyUsageOf(deps: KeyUsageDeps): ChannelKeyUsage {
  let usage = usages.get(deps.db);
  if (!usage) {
    usage = new ChannelKeyUsage(deps);
    usages.set(deps.db, usage);
  }
  return usage;
}
