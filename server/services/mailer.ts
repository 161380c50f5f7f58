// Outgoing e-mail through the SMTP server configured in the options, read at
// send time so a changed setting applies to the next mail. nodemailer loads
// with the first mail: it is about 12 MiB of memory a gateway that sends none
// never needs.
import type { OptionStore } from './optionStore';

export class MailError extends Error {}

export interface Mail {
  to: string;
  subject: string;
  html: string;
}

export type SendMail = (mail: Mail) => Promise<void>;

/** Escapes text for an HTML mail body. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

export function createMailer(options: OptionStore): SendMail {
  return async (mail) => {
    const host = options.get('SMTPServer');
    if (!host) throw new MailError('SMTP is not configured on this server');
    const port = options.number('SMTPPort') || 587;
    const account = options.get('SMTPAccount');
    const { default: nodemailer } = await import('nodemailer');
    const transport = nodemailer.createTransport({
      host,
      port,
      // 465 is implicit TLS; other ports upgrade with STARTTLS when offered. Certificates are always verified.
      secure: port === 465,
      auth: account ? { user: account, pass: options.get('SMTPToken') } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    const from = options.get('SMTPFrom') || account;
    try {
      await transport.sendMail({
        from: `"${options.get('SystemName').replace(/"/g, '')}" <${from}>`,
        to: mail.to,
        subject: mail.subject,
        html: mail.html,
      });
    } catch (error) {
      throw new MailError(`could not send the e-mail: ${(error as Error).message}`);
    } finally {
      transport.close();
    }
  };
}
