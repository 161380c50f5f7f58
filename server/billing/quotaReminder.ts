// The low-balance e-mail: sent once when a charge takes a user's quota from at
// or above QuotaRemindThreshold to below it (or to zero), to a bound address.
// It runs after the answer is sent and never fails the request.
import type { FastifyInstance } from 'fastify';

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

export async function remindIfLow(app: FastifyInstance, userId: number, charge: number): Promise<void> {
  const { db, options, sendMail, config } = app.ctx;
  // nothing to send without SMTP: skip the read on the hot path
  if (!options.get('SMTPServer')) return;
  const threshold = options.number('QuotaRemindThreshold');
  try {
    const user = await db
      .selectFrom('users')
      .select(['email', 'quota', 'held_quota', 'username'])
      .where('id', '=', userId)
      .executeTakeFirst();
    if (!user?.email) return;
    // the balance is what no charge has taken yet: quota plus what quota leases and requests in flight hold
    const after = Number(user.quota) + Number(user.held_quota);
    const crossing = lowQuotaCrossing(after, charge, threshold);
    if (!crossing) return;
    const usedUp = crossing === 'used_up';
    const perUnit = options.number('QuotaPerUnit') || 500000;
    const amount = options.bool('DisplayInCurrencyEnabled') ? `$${(after / perUnit).toFixed(2)}` : `${after} quota`;
    const topUp = `${(options.get('ServerAddress') || `http://localhost:${config.port}`).replace(/\/+$/, '')}/topup`;
    const name = options.get('SystemName');
    await sendMail({
      to: user.email,
      subject: usedUp ? `${name}: your quota is used up` : `${name}: your quota is running low`,
      html: `<p>Hello ${user.username.replace(/[<>&"']/g, '')},</p><p>${usedUp ? 'Your quota is used up.' : 'Your quota is running low.'} Remaining: <strong>${amount}</strong>.</p><p>Top up here: <a href="${topUp}">${topUp}</a></p>`,
    });
  } catch (error) {
    app.log.warn({ err: error }, 'could not send the low-quota reminder');
  }
}
