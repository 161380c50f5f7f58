// The events, each written where its change is decided (see the callers):
// channel.disabled / channel.enabled by autoDisable.ts and the channel routes,
// token.exhausted by relay/tokenAuth.ts, user.balance_low after the settlement
// batch that took the balance below QuotaRemindThreshold.
import type { Kysely } from 'kysely';
import type { OptionKey } from '../../common/options';
import { ChannelStatus } from '../../common/roles';
import type { Database } from '../db/database';
import { lowQuotaCrossing } from '../billing/quotaReminder';
import { userBalance } from '../repositories/userNotices';
import { emitWebhookEvent, webhookMayWant } from './events';

type Logger = { warn: (object: object, message: string) => void };

/** What the user.balance_low check reads: the database, the threshold option, and a log for what fails. */
export interface BalanceLowDeps {
  db: Kysely<Database>;
  options: { number(key: OptionKey): number };
  log: Logger;
}

/** A channel's status changed (by the system or an admin): channel.disabled or channel.enabled. */
export function channelStatusEvent(
  db: Kysely<Database>,
  log: Logger,
  channel: { id: number; name: string; type: number },
  status: number,
  change: { automatic: boolean; reason: string },
): Promise<void> {
  const type = status === ChannelStatus.enabled ? 'channel.enabled' : 'channel.disabled';
  return emitWebhookEvent(db, log, type, { channel, automatic: change.automatic, reason: change.reason });
}

/** A limited token was found spent and marked exhausted (once: the caller's UPDATE flipped it). */
export function tokenExhaustedEvent(
  db: Kysely<Database>,
  log: Logger,
  token: { id: number; name: string; user_id: number },
): Promise<void> {
  return emitWebhookEvent(db, log, 'token.exhausted', { token });
}

/**
 * After a settlement batch charged `charge` to a user: user.balance_low when
 * it took the balance from at or above the threshold to below it (or to zero).
 * Reads the balance only when some webhook may listen.
 */
export async function balanceLowEvent(deps: BalanceLowDeps, userId: number, charge: number): Promise<void> {
  const { db, options, log } = deps;
  if (!webhookMayWant(db, 'user.balance_low')) return;
  try {
    const threshold = options.number('QuotaRemindThreshold');
    const user = await userBalance(db, userId);
    if (!user) return;
    // the balance is what no charge has taken yet: quota plus what quota leases and requests in flight hold
    const balance = Number(user.quota) + Number(user.held_quota);
    const crossing = lowQuotaCrossing(balance, charge, threshold);
    if (!crossing) return;
    await emitWebhookEvent(db, log, 'user.balance_low', {
      user: { id: userId, username: user.username },
      quota: balance,
      threshold,
      used_up: crossing === 'used_up',
    });
  } catch (error) {
    log.warn({ err: error }, 'could not check the balance for user.balance_low');
  }
}
