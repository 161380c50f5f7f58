// The money lines of a user's log (a register gift, an invite reward, a
// top-up with a redemption code, an admin's quota change): the server writes
// each amount as whole quota in a fixed shape, whatever DisplayInCurrencyEnabled
// says, and the console says it in the display currency when it reads the row
// (src/resources/log/logContent.ts; tests/console/logMoney.test.tsx reads
// these same texts). So rows written under either setting read alike.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';

describe('the money lines of a log', () => {
  let app: FastifyInstance;
  let root: string;

  beforeAll(async () => {
    app = await buildTestApp();
    root = await login(app, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await app?.close();
  });

  const call = async (cookie: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
    (await asBrowser(app, cookie, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();
  const ownLogs = async (cookie: string) =>
    ((await call(cookie, 'GET', '/api/log/self/?p=0')).data as Array<{ content: string; quota: number; type: number }>)
      .map(({ content, quota, type }) => ({ content, quota, type }))
      .sort((a, b) => a.content.localeCompare(b.content));

  for (const inCurrency of ['true', 'false']) {
    it(`writes every amount as whole quota with DisplayInCurrencyEnabled ${inCurrency}`, async () => {
      await app.ctx.options.set('DisplayInCurrencyEnabled', inCurrency);
      await app.ctx.options.set('QuotaForNewUser', '2500');
      await app.ctx.options.set('QuotaForInvitee', '300');
      await app.ctx.options.set('QuotaForInviter', '700');
      const inviter = `inviter${inCurrency}`;
      const invitee = `invitee${inCurrency}`;
      const password = 'password-123';
      const registered = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username: inviter, password } });
      expect(registered.json().success).toBe(true);
      const inviterCookie = await login(app, inviter, password);
      const code = (await call(inviterCookie, 'GET', '/api/user/aff')).data as string;
      expect(code).toBeTruthy();
      const invited = await app.inject({
        method: 'POST',
        url: '/api/user/register',
        payload: { username: invitee, password, aff_code: code },
      });
      expect(invited.json().success).toBe(true);
      const cookie = await login(app, invitee, password);

      const [key] = (await call(root, 'POST', '/api/redemption/', { name: 'gift', quota: 500000, count: 1 })).data as string[];
      expect((await call(cookie, 'POST', '/api/user/topup', { key })).data).toBe(500000);
      const id = ((await call(cookie, 'GET', '/api/user/self')).data as { id: number }).id;
      expect((await call(root, 'PUT', '/api/user/', { id, username: invitee, quota: 5_000_000 })).success).toBe(true);

      expect(await ownLogs(cookie)).toEqual([
        { content: 'gift for using an invite code: 300 quota', quota: 300, type: 4 },
        { content: 'new-user gift: 2500 quota', quota: 2500, type: 4 },
        { content: 'root changed the quota from 502800 to 5000000', quota: 0, type: 3 },
        { content: 'top-up with a redemption code: 500000 quota', quota: 500000, type: 1 },
      ]);
      expect(await ownLogs(inviterCookie)).toEqual([
        { content: `gift for inviting ${invitee}: 700 quota`, quota: 700, type: 4 },
        { content: 'new-user gift: 2500 quota', quota: 2500, type: 4 },
      ]);
    });
  }
});
