// E-mail verification, password reset by link and e-mail binding, through a
// real SMTP server on loopback; the bot check through a local verifier.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register } from '../support/app';
import { startSmtp, type LocalSmtp } from '../support/smtp';

let smtp: LocalSmtp;
let app: FastifyInstance;
let verifier: Server;
let verifierUrl: string;
const verifierCalls: string[] = [];

beforeAll(async () => {
  smtp = await startSmtp();
  verifier = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      verifierCalls.push(body);
      const token = new URLSearchParams(body).get('response');
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ success: token === 'good-token' }));
    });
  });
  await new Promise<void>((resolveListen) => verifier.listen(0, '127.0.0.1', () => resolveListen()));
  verifierUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
  app = await buildTestApp({ turnstileVerifyUrl: verifierUrl });
  await app.ctx.options.set('SMTPServer', '127.0.0.1');
  await app.ctx.options.set('SMTPPort', String(smtp.port));
  await app.ctx.options.set('SMTPFrom', 'gateway@switchboard.test');
  await app.ctx.options.set('ServerAddress', 'https://gateway.example');
});
afterAll(async () => {
  await app.close();
  await smtp.close();
  await new Promise<void>((resolveClose) => verifier.close(() => resolveClose()));
});

const codeIn = (raw: string) => raw.match(/<strong>(\d{6})<\/strong>/)?.[1];
const linkIn = (raw: string) =>
  raw.replace(/\s+/g, '').match(/gateway\.example\/user\/reset\?email=[^"&]+&(?:amp;|#38;)?token=([0-9a-f]{64})/)?.[1];

describe('e-mail verification at registration', () => {
  it('sends a code, accepts it once, and stores the verified address', async () => {
    await app.ctx.options.set('EmailVerificationEnabled', 'true');
    const before = smtp.mails.length;
    const sent = await app.inject({ method: 'GET', url: '/api/verification?email=Nina@Example.com' });
    expect(sent.json()).toEqual({ success: true, message: '' });
    const mail = await smtp.waitForMail('nina@example.com', before);
    const code = codeIn(mail.raw);
    expect(code).toMatch(/^\d{6}$/);

    const payload = { username: 'nina', password: 'nina-password', password2: 'nina-password', email: 'nina@example.com' };
    const wrong = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { ...payload, verification_code: '000000' === code ? '111111' : '000000' },
    });
    expect(wrong.json().message).toBe('the verification code is wrong or has expired');
    const missing = await app.inject({ method: 'POST', url: '/api/user/register', payload });
    expect(missing.json().message).toBe('an e-mail address and its verification code are required');
    const good = await app.inject({ method: 'POST', url: '/api/user/register', payload: { ...payload, verification_code: code } });
    expect(good.json()).toEqual({ success: true, message: '' });
    const nina = await app.ctx.db.selectFrom('users').select('email').where('username', '=', 'nina').executeTakeFirstOrThrow();
    expect(nina.email).toBe('nina@example.com');
    const reused = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { ...payload, username: 'nina2', verification_code: code },
    });
    expect(reused.json().success).toBe(false);
  });

  it('does not reveal that an address is taken, and sends no code for it', async () => {
    const before = smtp.mails.length;
    const response = await app.inject({ method: 'GET', url: '/api/verification?email=nina@example.com' });
    expect(response.json()).toEqual({ success: true, message: '' });
    const mail = await smtp.waitForMail('nina@example.com', before);
    expect(codeIn(mail.raw)).toBeUndefined();
    expect(mail.raw).toContain('already belongs to an account');
  });

  it('enforces the domain whitelist when it is on', async () => {
    await app.ctx.options.set('EmailDomainWhitelist', 'example.com');
    await app.ctx.options.set('EmailDomainRestrictionEnabled', 'true');
    expect((await app.inject({ method: 'GET', url: '/api/verification?email=x@elsewhere.org' })).json().message).toBe(
      'this e-mail domain is not accepted here',
    );
    expect((await app.inject({ method: 'GET', url: '/api/verification?email=new@example.com' })).json().success).toBe(true);
    await app.ctx.options.set('EmailDomainRestrictionEnabled', 'false');
  });

  it('stops a requester after 5 wrong guesses, without burning the code for its owner', async () => {
    const before = smtp.mails.length;
    await app.inject({ method: 'GET', url: '/api/verification?email=guess@example.com' });
    const code = codeIn((await smtp.waitForMail('guess@example.com', before)).raw)!;
    const payload = { username: 'guesser', password: 'guess-password', email: 'guess@example.com' };
    const stranger = '198.51.100.7';
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const wrongCode = String((Number(code) + 1 + attempt) % 1_000_000).padStart(6, '0');
      const wrong = await app.inject({
        method: 'POST',
        url: '/api/user/register',
        remoteAddress: stranger,
        payload: { ...payload, verification_code: wrongCode },
      });
      expect(wrong.json().message).toBe('the verification code is wrong or has expired');
    }
    // the guesser is stopped, even with the right code
    const late = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      remoteAddress: stranger,
      payload: { ...payload, verification_code: code },
    });
    expect(late.json().message).toBe('too many wrong codes for this address, please wait and request a new code');
    // the owner, elsewhere, still uses the code
    const owner = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      remoteAddress: '203.0.113.9',
      payload: { ...payload, verification_code: code },
    });
    expect(owner.json()).toEqual({ success: true, message: '' });
    await app.ctx.options.set('EmailVerificationEnabled', 'false');
  });
});

describe('password reset by e-mail', () => {
  it('mails a single-use link; confirming it returns a new password and ends old sessions', async () => {
    const oldSession = await login(app, 'nina', 'nina-password');
    const before = smtp.mails.length;
    expect((await app.inject({ method: 'GET', url: '/api/reset_password?email=nina@example.com' })).json()).toEqual({
      success: true,
      message: '',
    });
    const token = linkIn((await smtp.waitForMail('nina@example.com', before)).raw);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const confirmed = await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email: 'nina@example.com', token } });
    expect(confirmed.json().success).toBe(true);
    const password = confirmed.json().data as string;
    expect(password).toMatch(/^[0-9A-Za-z]{12}$/);
    await login(app, 'nina', password);
    expect((await asBrowser(app, oldSession, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(401);
    const again = await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email: 'nina@example.com', token } });
    expect(again.json()).toEqual({ success: false, message: 'the reset link is invalid or has expired' });
  });

  it('answers the same for an unknown address and sends nothing', async () => {
    const before = smtp.mails.length;
    expect((await app.inject({ method: 'GET', url: '/api/reset_password?email=ghost@example.com' })).json()).toEqual({
      success: true,
      message: '',
    });
    await new Promise((wake) => setTimeout(wake, 200));
    expect(smtp.mails.slice(before).filter((mail) => mail.to.includes('ghost@example.com'))).toEqual([]);
  });
});

describe('e-mail binding', () => {
  it('binds a verified address to the signed-in user, once, and not one in use', async () => {
    await register(app, 'otto');
    const otto = await login(app, 'otto', 'password-123');
    const before = smtp.mails.length;
    await app.inject({ method: 'GET', url: '/api/verification?email=otto@example.com' });
    const code = codeIn((await smtp.waitForMail('otto@example.com', before)).raw);
    const bound = await asBrowser(app, otto, { method: 'GET', url: `/api/oauth/email/bind?email=otto@example.com&code=${code}` });
    expect(bound.json()).toEqual({ success: true, message: '', data: { email: 'otto@example.com' } });
    const crossSite = await app.inject({
      method: 'GET',
      url: `/api/oauth/email/bind?email=otto@example.com&code=${code}`,
      headers: { cookie: otto, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.statusCode).toBe(403);
  });
});

describe('bot check', () => {
  it('verifies the turnstile token with the configured verifier on every protected request', async () => {
    await app.ctx.options.set('TurnstileSiteKey', 'site-key');
    await app.ctx.options.set('TurnstileSecretKey', 'secret-key');
    await app.ctx.options.set('TurnstileCheckEnabled', 'true');
    const payload = { username: 'botty', password: 'botty-password' };
    expect((await app.inject({ method: 'POST', url: '/api/user/register', payload })).json().success).toBe(false);
    expect((await app.inject({ method: 'POST', url: '/api/user/register?turnstile=bad-token', payload })).json().message).toBe(
      'the bot check failed, please refresh the page and retry',
    );
    expect((await app.inject({ method: 'POST', url: '/api/user/register?turnstile=good-token', payload })).json()).toEqual({
      success: true,
      message: '',
    });
    expect(new URLSearchParams(verifierCalls.at(-1)).get('secret')).toBe('secret-key');
    await app.ctx.options.set('TurnstileCheckEnabled', 'false');
  });

  it('refuses to send mail when SMTP is not configured', async () => {
    await app.ctx.options.set('SMTPServer', '');
    expect((await app.inject({ method: 'GET', url: '/api/verification?email=late@example.com' })).json()).toEqual({
      success: false,
      message: 'SMTP is not configured on this server',
    });
    await app.ctx.options.set('SMTPServer', '127.0.0.1');
  });
});
