// The low-balance e-mail: sent once when a charge takes a user's quota from at
// or above QuotaRemindThreshold to below it (or to zero), to a bound address.
// It runs after the answer is sent and never fails the request.
import type { Kysely } from 'kysely';
import type { OptionKey } from '../../common/options';
import type { Database } from '../db/database';
import { userMailAndBalance } from '../repositories/userNotices';

/** What the reminder needs: the database, the options, the mailer, the port (the top-up link's fallback) and a log. */
export interface QuotaReminderDeps {
  db: Kysely<Database>;
  options: { get(key: OptionKey): string; number(key: OptionKey): number; bool(key: OptionKey): boolean };
  sendMail: (mail: { to: string; subject: string; html: string }) => Promise<void>;
  /** The port this server listens on, for the top-up link when ServerAddress is unset. */
  port: number;
  log: { warn: (object: object, message: string) => void };
}

/**
 * Whether a charge of `charge` that left `after` crossed the reminder line:
 * 'used_up' when it took a positive balance to zero or below, 'low' when it
 * took it from at or above `threshold` to below, otherwise undefined. The
 * e-mail and the user.balance_low webhook both use it, so they agree.
 */
export function lowQuotaCrossing(after: number, charge: number, threshold: number): 'used_up' | 'low' | undefined {
  const before = after + charge;
  if (after <= 0 && before > 0) return 'used_up';
  if (before >= threshold && after < threshold) return 'low';
  return undefined;
}

/** Sends the low-balance e-mail when `charge` took the user's balance across the reminder line; never throws. */
export async function remindIfLow(deps: QuotaReminderDeps, userId: number, charge: number): Promise<void> {
  const { db, options, sendMail, port } = deps;
  // nothing to send without SMTP: skip the read on the hot path
  if (!options.get('SMTPServer')) return;
  const threshold = options.number('QuotaRemindThreshold');
  try {
    const user = await userMailAndBalance(db, userId);
    if (!user?.email) return;
    // the balance is what no charge has taken yet: quota plus what quota leases and requests in flight hold
    const after = Number(user.quota) + Number(user.held_quota);
    const crossing = lowQuotaCrossing(after, charge, threshold);
    if (!crossing) return;
    const usedUp = crossing === 'used_up';
    const perUnit = options.number('QuotaPerUnit') || 500000;
    const amount = options.bool('DisplayInCurrencyEnabled') ? `$${(after / perUnit).toFixed(2)}` : `${after} quota`;
    const topUp = `${(options.get('ServerAddress') || `http://localhost:${port}`).replace(/\/+$/, '')}/topup`;
    const name = options.get('SystemName');
    await sendMail({
      to: user.email,
      subject: usedUp ? `${name}: your quota is used up` : `${name}: your quota is running low`,
      html: `<p>Hello ${user.username.replace(/[<>&"']/g, '')},</p><p>${usedUp ? 'Your quota is used up.' : 'Your quota is running low.'} Remaining: <strong>${amount}</strong>.</p><p>Top up here: <a href="${topUp}">${topUp}</a></p>`,
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'could not send the low-quota reminder');
  }
}
