// POST /api/option/test_email: root proves the saved SMTP settings by mailing
// the e-mail bound to their own account; every failure says what to fix.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { startSmtp, type LocalSmtp } from '../support/smtp';

let app: FastifyInstance;
let smtp: LocalSmtp;
let root: string;

beforeAll(async () => {
  smtp = await startSmtp();
  app = await buildTestApp();
  root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const sendTest = async () => (await asBrowser(app, root, { method: 'POST', url: '/api/option/test_email' })).json();
const setOption = (key: string, value: string) => app.ctx.options.set(key as never, value);
const bindRootEmail = (email: string) => app.ctx.db.updateTable('users').set({ email }).where('username', '=', 'root').execute();

describe('send test e-mail', () => {
  it('asks for a bound e-mail address first', async () => {
    const answer = await sendTest();
    expect(answer.success).toBe(false);
    expect(answer.message).toMatch(/your account has no e-mail address/);
  });

  it('says when SMTP is not configured', async () => {
    await bindRootEmail('root@example.test');
    expect(await sendTest()).toEqual({ success: false, message: 'SMTP is not configured: fill in and save the SMTP server first' });
  });

  it('mails the caller through the saved SMTP server', async () => {
    await setOption('SMTPServer', '127.0.0.1');
    await setOption('SMTPPort', String(smtp.port));
    await setOption('SMTPFrom', 'gateway@example.test');
    await setOption('SystemName', 'Acme AI');
    const since = smtp.mails.length;
    expect(await sendTest()).toEqual({ success: true, message: '', data: 'root@example.test' });
    const mail = await smtp.waitForMail('root@example.test', since);
    expect(mail.raw).toMatch(/test e-mail from Acme AI/);
  });

  it('reports an SMTP server that cannot be reached, quickly', async () => {
    await setOption('SMTPPort', '9');
    const started = Date.now();
    const answer = await sendTest();
    expect(answer.success).toBe(false);
    expect(answer.message).toMatch(/^could not send the e-mail: .*ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
