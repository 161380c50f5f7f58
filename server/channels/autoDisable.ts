// Automatic channel disabling. A channel is switched off by the system only
// when AutomaticDisableChannelEnabled is on and the evidence is conclusive: the
// channel's adaptor reads the upstream's answer as a dead key (invalid key,
// deactivated account, out of credit, in that vendor's words and whatever the
// HTTP status it said it with), or a health test was slower than
// ChannelDisableThreshold. Such channels carry auto_disabled = 1 so the health
// checker may bring them back; a channel an admin disabled is never touched.
import type { Kysely } from 'kysely';
import { ChannelStatus } from '../../common/roles';
import { ChannelKeyStatus } from '../../common/records';
import type { Database } from '../db/database';
import { countLiveChannelKeys, setChannelKeyStatus } from '../repositories/channelKeys';
import { updateChannel } from '../repositories/channels';
import { autoDisableChannel, autoReenableChannel, channelNameAndType } from '../repositories/channelStatus';
import { rootEmail } from '../repositories/userNotices';
import type { SendMail } from '../services/mailer';
import type { OptionStore } from '../services/optionStore';
import { channelStatusEvent } from '../webhooks/triggers';

// Whether a failure proves a dead key is the adaptor's call (UpstreamFailure.deadKey,
// from server/protocols/upstream/<protocol>.ts): each protocol knows its vendor's words.
export type { UpstreamFailure } from '../protocols/types';

/** What switching channels on and off needs: the database, the options, the mailer (root's notices) and a log. */
export interface ChannelStatusDeps {
  db: Kysely<Database>;
  options: Pick<OptionStore, 'bool' | 'get'>;
  sendMail: SendMail;
  log: { warn: (object: object, message: string) => void };
}

/**
 * Disables the channel on behalf of the system when the toggle is on, and
 * tells root by e-mail. Returns whether it disabled anything; an already
 * disabled channel is left alone, so one incident sends one e-mail.
 */
export async function disableChannelAutomatically(deps: ChannelStatusDeps, channelId: number, reason: string): Promise<boolean> {
  const { db, options, log } = deps;
  if (!options.bool('AutomaticDisableChannelEnabled')) return false;
  // only an enabled channel flips, so concurrent failures disable (and mail) once
  if (!(await autoDisableChannel(db, channelId))) return false;
  await updateChannel(db, channelId, {}); // rebuild its abilities as disabled
  const channel = await channelNameAndType(db, channelId);
  log.warn({ channelId, reason }, 'channel disabled automatically');
  await channelStatusEvent(
    db,
    log,
    { id: channelId, name: channel?.name ?? '', type: Number(channel?.type ?? 0) },
    ChannelStatus.disabled,
    {
      automatic: true,
      reason,
    },
  );
  void notifyRoot(
    deps,
    `Channel «${channel?.name ?? ''}» (#${channelId}) has been disabled`,
    `<p>The channel «${escapeHtml(channel?.name ?? '')}» (#${channelId}) was disabled automatically.</p><p>Reason: ${escapeHtml(reason)}</p>`,
  ).catch((error: unknown) => log.warn({ err: error }, 'could not e-mail root about a disabled channel'));
  return true;
}

/** Re-enables a channel the system had disabled (never one an admin disabled). */
export async function reenableChannelAutomatically(deps: ChannelStatusDeps, channelId: number): Promise<boolean> {
  const { db, log } = deps;
  if (!(await autoReenableChannel(db, channelId))) return false;
  await updateChannel(db, channelId, {});
  log.warn({ channelId }, 'channel re-enabled after a healthy test');
  const channel = await channelNameAndType(db, channelId);
  await channelStatusEvent(db, log, { id: channelId, name: channel?.name ?? '', type: Number(channel?.type ?? 0) }, ChannelStatus.enabled, {
    automatic: true,
    reason: 'passed a health test',
  });
  return true;
}

/**
 * Sets a dead key of a multi-key channel aside, alone, on behalf of the
 * system (when the toggle is on): the channel keeps serving with its other
 * keys, and is disabled only when no live key is left. Whether the key flipped.
 */
export async function disableChannelKeyAutomatically(
  deps: ChannelStatusDeps,
  channelId: number,
  keyId: number,
  reason: string,
): Promise<boolean> {
  const { db, options } = deps;
  if (!options.bool('AutomaticDisableChannelEnabled')) return false;
  // only an enabled key flips, so concurrent failures set it aside (and log) once
  if (!(await setChannelKeyStatus(db, keyId, ChannelKeyStatus.autoDisabled, { from: ChannelKeyStatus.enabled, lastError: reason })))
    return false;
  deps.log.warn({ channelId, keyId, reason }, 'channel key disabled automatically');
  if ((await countLiveChannelKeys(db, channelId)) === 0) {
    await disableChannelAutomatically(deps, channelId, `no live key is left; the last one failed: ${reason}`);
  }
  return true;
}

/** Brings back a key the system had set aside (never one an admin disabled), and its channel if the system had disabled it. */
export async function reenableChannelKeyAutomatically(deps: ChannelStatusDeps, channelId: number, keyId: number): Promise<boolean> {
  const { db } = deps;
  if (!(await setChannelKeyStatus(db, keyId, ChannelKeyStatus.enabled, { from: ChannelKeyStatus.autoDisabled, lastError: '' })))
    return false;
  deps.log.warn({ channelId, keyId }, 'channel key re-enabled after a healthy test');
  await reenableChannelAutomatically(deps, channelId);
  return true;
}

/** E-mails the root account, when it has an address and SMTP is set up. */
export async function notifyRoot(deps: Omit<ChannelStatusDeps, 'log'>, subject: string, html: string): Promise<void> {
  const { db, options, sendMail } = deps;
  if (!options.get('SMTPServer')) return;
  const root = await rootEmail(db);
  if (!root?.email) return;
  await sendMail({ to: root.email, subject: `${options.get('SystemName')}: ${subject}`, html });
}

const escapeHtml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
