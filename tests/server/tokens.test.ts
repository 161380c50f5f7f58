// Relay tokens: owner-scoped CRUD, validation, status rules; isolation is
// checked on SQLite, PostgreSQL and MySQL.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('tokens', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`tokens on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let alice: string;
    let bob: string;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      await register(app, 'alice');
      await register(app, 'bob');
      alice = await login(app, 'alice', 'password-123');
      bob = await login(app, 'bob', 'password-123');
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    const call = (cookie: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      asBrowser(app, cookie, { method, url, payload: payload as never }).then((response) => response.json());

    it('creates a token with a 48-character key shown once, masked in lists', async () => {
      const created = await call(alice, 'POST', '/api/token/', {
        name: 'laptop',
        remain_quota: 500000,
        expired_time: -1,
        unlimited_quota: false,
      });
      expect(created.success).toBe(true);
      expect(created.data.key).toMatch(/^[0-9A-Za-z]{48}$/);
      const list = await call(alice, 'GET', '/api/token/?p=0');
      expect(list.data).toHaveLength(1);
      expect(list.data[0]).toMatchObject({ name: 'laptop', status: 1, remain_quota: 500000, unlimited_quota: false, expired_time: -1 });
      expect(JSON.stringify(list)).not.toContain(created.data.key);
      const key = await call(alice, 'GET', `/api/token/${created.data.id}/key`);
      expect(key.data).toBe(created.data.key);
    });

    it('keeps tokens private to their owner', async () => {
      const mine = await call(alice, 'POST', '/api/token/', { name: 'private', remain_quota: 10 });
      const id = mine.data.id;
      expect(await call(bob, 'GET', `/api/token/${id}`)).toEqual({ success: false, message: 'token not found', code: 'token_not_found' });
      expect(await call(bob, 'GET', `/api/token/${id}/key`)).toEqual({
        success: false,
        message: 'token not found',
        code: 'token_not_found',
      });
      expect(await call(bob, 'PUT', '/api/token/', { id, name: 'stolen' })).toEqual({
        success: false,
        message: 'token not found',
        code: 'token_not_found',
      });
      expect(await call(bob, 'PUT', '/api/token/?status_only=true', { id, status: 2 })).toEqual({
        success: false,
        message: 'token not found',
        code: 'token_not_found',
      });
      expect(await call(bob, 'DELETE', `/api/token/${id}/`)).toEqual({
        success: false,
        message: 'token not found',
        code: 'token_not_found',
      });
      expect((await call(bob, 'GET', '/api/token/?p=0')).data).toEqual([]);
      expect((await call(bob, 'GET', '/api/token/search?keyword=priv')).data).toEqual([]);
      expect((await call(alice, 'GET', '/api/token/search?keyword=priv')).data.map((row: { name: string }) => row.name)).toEqual([
        'private',
      ]);
      expect((await call(alice, 'GET', `/api/token/${id}`)).data.name).toBe('private');
    });

    it('finds a token by its whole key, with or without sk- (the console puts a key it could not copy into the search box)', async () => {
      const made = await call(alice, 'POST', '/api/token/', { name: 'by-key', remain_quota: 10 });
      const key = (await call(alice, 'GET', `/api/token/${made.data.id}/key`)).data as string;
      for (const typed of [key, `sk-${key}`]) {
        const found = await call(alice, 'GET', `/api/token/search?keyword=${encodeURIComponent(typed)}`);
        expect(found.data.map((row: { id: number }) => row.id)).toEqual([made.data.id]);
        expect(JSON.stringify(found.data)).not.toContain(key);
      }
      // someone else's key finds nothing, and a part of a key is not a key
      expect((await call(bob, 'GET', `/api/token/search?keyword=sk-${key}`)).data).toEqual([]);
      expect((await call(alice, 'GET', `/api/token/search?keyword=${key.slice(0, 20)}`)).data).toEqual([]);
    });

    it('validates the form', async () => {
      expect((await call(alice, 'POST', '/api/token/', { name: '' })).message).toBe('token name is required');
      expect((await call(alice, 'POST', '/api/token/', { name: 'x'.repeat(31) })).message).toBe('token name must be at most 30 characters');
      expect((await call(alice, 'POST', '/api/token/', { name: 'neg', remain_quota: -1 })).success).toBe(false);
      expect((await call(alice, 'POST', '/api/token/', { name: 'past', expired_time: 1000 })).message).toBe('expiry must be in the future');
      expect((await call(alice, 'POST', '/api/token/', { name: 'ip', allowed_ips: '10.0.0.0/33' })).success).toBe(false);
      const fine = await call(alice, 'POST', '/api/token/', { name: 'ok', allowed_ips: '10.0.0.0/8, ::1', models: 'gpt-4,gpt-4' });
      expect(fine.data).toMatchObject({ allowed_ips: '10.0.0.0/8,::1', models: 'gpt-4' });
      const defaults = await call(alice, 'POST', '/api/token/', { name: 'defaults' });
      expect(defaults.data).toMatchObject({ remain_quota: 500000, expired_time: -1 });
    });

    it('refuses to re-enable an expired or exhausted token until it is fixed', async () => {
      const created = await call(alice, 'POST', '/api/token/', { name: 'spent', remain_quota: 100 });
      const id = created.data.id;
      await app.ctx.db.updateTable('tokens').set({ status: 4, remain_quota: 0 }).where('id', '=', id).execute();
      expect((await call(alice, 'PUT', '/api/token/?status_only=true', { id, status: 1 })).message).toBe(
        'the token quota is used up: raise its quota first',
      );
      const fixed = await call(alice, 'PUT', '/api/token/', {
        id,
        name: 'spent',
        remain_quota: 50,
        expired_time: -1,
        unlimited_quota: false,
      });
      expect(fixed.data).toMatchObject({ status: 1, remain_quota: 50 });

      await app.ctx.db.updateTable('tokens').set({ status: 3, expired_time: 1000 }).where('id', '=', id).execute();
      expect((await call(alice, 'PUT', '/api/token/?status_only=true', { id, status: 1 })).message).toBe(
        'the token has expired: change its expiry first',
      );
      expect((await call(alice, 'PUT', '/api/token/?status_only=true', { id, status: 3 })).message).toBe(
        'a token can only be enabled or disabled',
      );
    });

    it('toggles and deletes', async () => {
      const created = await call(alice, 'POST', '/api/token/', { name: 'temp' });
      const id = created.data.id;
      expect((await call(alice, 'PUT', '/api/token/?status_only=true', { id, status: 2 })).data.status).toBe(2);
      expect((await call(alice, 'PUT', '/api/token/?status_only=true', { id, status: 1 })).data.status).toBe(1);
      expect(await call(alice, 'DELETE', `/api/token/${id}/`)).toEqual({ success: true, message: '' });
      expect((await call(alice, 'GET', `/api/token/${id}`)).success).toBe(false);
    });
  });
}
