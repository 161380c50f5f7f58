// Redemption codes and top-up, on SQLite, PostgreSQL and MySQL: a code is
// consumed exactly once even when 20 redemptions race for it.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('redemptions');

for (const target of targets) {
  describe.runIf(target.available)(`redemption codes on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let user: string;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await register(app, 'buyer');
      user = await login(app, 'buyer', 'password-123');
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    const create = (payload: unknown) =>
      asBrowser(app, root, { method: 'POST', url: '/api/redemption/', payload: payload as never }).then((response) => response.json());
    const quotaOf = async (username: string) =>
      Number((await app.ctx.db.selectFrom('users').select('quota').where('username', '=', username).executeTakeFirstOrThrow()).quota);

    it('creates a batch and returns the keys; lists mask them', async () => {
      const created = await create({ name: 'launch', quota: 100000, count: 3 });
      expect(created.success).toBe(true);
      expect(created.data).toHaveLength(3);
      for (const key of created.data) expect(key).toMatch(/^[0-9a-f]{32}$/);
      const list = (await asBrowser(app, root, { method: 'GET', url: '/api/redemption/?p=0' })).json();
      expect(list.data).toHaveLength(3);
      expect(JSON.stringify(list)).not.toContain(created.data[0]);
      const key = (await asBrowser(app, root, { method: 'GET', url: `/api/redemption/${list.data[0].id}/key` })).json();
      expect(created.data).toContain(key.data);
    });

    it('validates names, quotas and counts', async () => {
      expect((await create({ name: '', quota: 1, count: 1 })).message).toBe('name length must be 1-20');
      expect((await create({ name: 'x', quota: -5, count: 1 })).success).toBe(false);
      expect((await create({ name: 'x', quota: 10, count: 0 })).message).toBe('count must be greater than 0');
      expect((await create({ name: 'x', quota: 10, count: 101 })).message).toBe('at most 100 codes per batch');
    });

    it('redeems a code exactly once under 20 concurrent attempts and logs the top-up', async () => {
      const [key] = (await create({ name: 'race', quota: 7777, count: 1 })).data;
      const before = await quotaOf('buyer');
      const attempts = await Promise.all(
        Array.from({ length: 20 }, () =>
          asBrowser(app, user, { method: 'POST', url: '/api/user/topup', payload: { key } }).then((response) => response.json()),
        ),
      );
      const successes = attempts.filter((attempt) => attempt.success);
      expect(successes).toHaveLength(1);
      expect(successes[0].data).toBe(7777);
      expect(attempts.filter((attempt) => !attempt.success).every((attempt) => /already been used/.test(attempt.message))).toBe(true);
      expect(await quotaOf('buyer')).toBe(before + 7777);
      const code = await app.ctx.db.selectFrom('redemptions').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
      const buyer = await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'buyer').executeTakeFirstOrThrow();
      expect(Number(code.status)).toBe(3);
      expect(Number(code.redeemed_by)).toBe(Number(buyer.id));
      expect(Number(code.redeemed_time)).toBeGreaterThan(0);
      const logs = await app.ctx.db.selectFrom('logs').selectAll().where('user_id', '=', Number(buyer.id)).where('type', '=', 1).execute();
      expect(logs).toHaveLength(1);
      expect(Number(logs[0].quota)).toBe(7777);
    });

    it('never re-enables a used code, and refuses disabled and unknown codes', async () => {
      const [key] = (await create({ name: 'once', quota: 5, count: 1 })).data;
      expect((await asBrowser(app, user, { method: 'POST', url: '/api/user/topup', payload: { key } })).json().success).toBe(true);
      const row = await app.ctx.db.selectFrom('redemptions').select('id').where('key', '=', key).executeTakeFirstOrThrow();
      const reenable = await asBrowser(app, root, {
        method: 'PUT',
        url: '/api/redemption/?status_only=true',
        payload: { id: Number(row.id), status: 1 },
      });
      expect(reenable.json()).toEqual({ success: false, message: 'a used code cannot be changed' });

      const [other] = (await create({ name: 'off', quota: 5, count: 1 })).data;
      const otherRow = await app.ctx.db.selectFrom('redemptions').select('id').where('key', '=', other).executeTakeFirstOrThrow();
      expect(
        (
          await asBrowser(app, root, {
            method: 'PUT',
            url: '/api/redemption/?status_only=true',
            payload: { id: Number(otherRow.id), status: 2 },
          })
        ).json().success,
      ).toBe(true);
      expect((await asBrowser(app, user, { method: 'POST', url: '/api/user/topup', payload: { key: other } })).json().message).toBe(
        'redeem failed: this code is disabled',
      );
      expect((await asBrowser(app, user, { method: 'POST', url: '/api/user/topup', payload: { key: 'nope' } })).json().message).toBe(
        'redeem failed: invalid redemption code',
      );
      expect((await asBrowser(app, user, { method: 'POST', url: '/api/user/topup', payload: { key: '' } })).json().message).toBe(
        'please enter the code',
      );
    });

    it('searches by id, by name prefix (taking % literally) and by the whole code', async () => {
      await create({ name: '100%_off', quota: 5, count: 1 });
      const byName = (await asBrowser(app, root, { method: 'GET', url: '/api/redemption/search?keyword=100%25' })).json();
      expect(byName.data.map((row: { name: string }) => row.name)).toEqual(['100%_off']);
      const wildcard = (await asBrowser(app, root, { method: 'GET', url: '/api/redemption/search?keyword=%25' })).json();
      expect(wildcard.data).toEqual([]);
      const byId = (await asBrowser(app, root, { method: 'GET', url: '/api/redemption/search?keyword=1' })).json();
      expect(byId.data.some((row: { id: number }) => row.id === 1)).toBe(true);
      const [code] = (await create({ name: 'by-key', quota: 5, count: 1 })).data;
      const byKey = (await asBrowser(app, root, { method: 'GET', url: `/api/redemption/search?keyword=${code}` })).json();
      expect(byKey.data.map((row: { name: string }) => row.name)).toEqual(['by-key']);
      expect(JSON.stringify(byKey.data)).not.toContain(code);
    });
  });
}
