// Channels: write-only keys, batch creation, abilities kept in step with every
// write; on SQLite, PostgreSQL and MySQL.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('channels', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`channels on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const abilitiesOf = (channelId: number) =>
      app.ctx.db.selectFrom('abilities').selectAll().where('channel_id', '=', channelId).orderBy('group').orderBy('model').execute();

    it('creates one channel per key line, with abilities, and never returns keys', async () => {
      const created = await call('POST', '/api/channel/', {
        name: 'openai-main',
        type: 1,
        key: 'sk-first-secret\n  sk-second-secret  \n\n',
        models: 'gpt-4, gpt-3.5-turbo,gpt-4',
        group: 'default,vip',
        base_url: 'https://api.example.com///',
        model_mapping: '',
      });
      expect(created.success).toBe(true);
      expect(created.data.ids).toHaveLength(2);
      const list = await call('GET', '/api/channel/?p=0');
      expect(list.data).toHaveLength(2);
      expect(JSON.stringify(list)).not.toContain('secret');
      expect(list.data[0]).toMatchObject({
        name: 'openai-main',
        key: '',
        base_url: 'https://api.example.com',
        models: 'gpt-4,gpt-3.5-turbo',
        model_mapping: '{}',
        status: 1,
      });
      const abilities = await abilitiesOf(created.data.ids[0]);
      expect(abilities.map((row) => `${row.group}/${row.model}/${row.enabled}`)).toEqual([
        'default/gpt-3.5-turbo/1',
        'default/gpt-4/1',
        'vip/gpt-3.5-turbo/1',
        'vip/gpt-4/1',
      ]);
      const stored = await app.ctx.db.selectFrom('channels').select('key').where('id', '=', created.data.ids[1]).executeTakeFirstOrThrow();
      expect(stored.key).toBe('sk-second-secret');
    });

    it('keeps the key on an edit with an empty key and rebuilds abilities', async () => {
      const [channel] = (await call('GET', '/api/channel/?p=0')).data;
      const edited = await call('PUT', '/api/channel/', { ...channel, key: '', models: 'gpt-4', group: 'default' });
      expect(edited.data).toMatchObject({ id: channel.id, models: 'gpt-4', key: '' });
      const stored = await app.ctx.db.selectFrom('channels').select('key').where('id', '=', channel.id).executeTakeFirstOrThrow();
      expect(stored.key).toBe('sk-second-secret');
      expect((await abilitiesOf(channel.id)).map((row) => `${row.group}/${row.model}`)).toEqual(['default/gpt-4']);
    });

    it('toggles status and the abilities follow', async () => {
      const [channel] = (await call('GET', '/api/channel/?p=0')).data;
      expect((await call('PUT', '/api/channel/', { id: channel.id, status: 2 })).data.status).toBe(2);
      expect((await abilitiesOf(channel.id)).every((row) => Number(row.enabled) === 0)).toBe(true);
      expect((await call('PUT', '/api/channel/', { id: channel.id, status: 1 })).data.status).toBe(1);
      expect((await abilitiesOf(channel.id)).every((row) => Number(row.enabled) === 1)).toBe(true);
    });

    it('creates a channel disabled when asked to (status 2), with its abilities off, and keeps it so', async () => {
      const created = await call('POST', '/api/channel/', {
        name: 'off-at-first',
        type: 1,
        key: 'sk-off',
        models: 'gpt-4',
        group: 'default',
        status: 2,
      });
      expect(created.success).toBe(true);
      const [id] = created.data.ids as number[];
      expect((await call('GET', `/api/channel/${id}`)).data).toMatchObject({ name: 'off-at-first', status: 2 });
      expect((await call('GET', '/api/channel/?p=0')).data.find((row: { id: number }) => row.id === id)).toMatchObject({ status: 2 });
      expect((await abilitiesOf(id)).map((row) => Number(row.enabled))).toEqual([0]);
      // an admin's choice, not the health checker's: nothing marks it automatically disabled
      const stored = await app.ctx.db
        .selectFrom('channels')
        .select(['status', 'auto_disabled'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect({ status: Number(stored.status), auto_disabled: Number(stored.auto_disabled) }).toEqual({ status: 2, auto_disabled: 0 });
      // without a status, or with one that is not "disabled", a new channel is enabled as before
      const enabled = await call('POST', '/api/channel/', { name: 'on-at-first', type: 1, key: 'sk-on', models: 'gpt-4', status: 1 });
      expect((await call('GET', `/api/channel/${enabled.data.ids[0]}`)).data.status).toBe(1);
      await call('DELETE', `/api/channel/${id}`);
      await call('DELETE', `/api/channel/${enabled.data.ids[0]}`);
    });

    it("validates the form with the spec's messages", async () => {
      expect((await call('POST', '/api/channel/', { name: '', type: 1, key: 'k', models: 'gpt-4' })).message).toBe(
        'fill in channel name and key',
      );
      expect((await call('POST', '/api/channel/', { name: 'x', type: 1, key: '', models: 'gpt-4' })).message).toBe(
        'fill in channel name and key',
      );
      expect((await call('POST', '/api/channel/', { name: 'x', type: 1, key: 'k', models: ' , ' })).message).toBe(
        'select at least one model',
      );
      expect((await call('POST', '/api/channel/', { name: 'x', type: 99, key: 'k', models: 'gpt-4' })).message).toBe(
        'unknown channel type: 99',
      );
      expect((await call('POST', '/api/channel/', { name: 'x', type: 1, key: 'k', models: 'gpt-4', model_mapping: '{bad' })).success).toBe(
        false,
      );
      expect((await call('POST', '/api/channel/', { name: 'x', type: 8, key: 'k', models: 'gpt-4' })).message).toBe(
        'this channel type needs a base URL',
      );
      const azure = await call('POST', '/api/channel/', {
        name: 'azure',
        type: 3,
        key: 'k',
        models: 'gpt-4',
        base_url: 'https://az.example.com',
      });
      expect((await call('GET', `/api/channel/${azure.data.ids[0]}`)).data.other).toBe('2023-06-01-preview');
    });

    it("reads each type's rules from the channel-type table: key format, required base URL, `other` default, today's types", async () => {
      const baidu = { name: 'ernie', type: 15, models: 'ERNIE-3.5-8K' };
      expect((await call('POST', '/api/channel/', { ...baidu, key: 'only-one-part' })).message).toBe(
        'the key must be written as APIKey|SecretKey',
      );
      expect((await call('POST', '/api/channel/', { ...baidu, key: 'ak|sk\nak2|' })).message).toBe(
        'the key must be written as APIKey|SecretKey',
      );
      const spark = await call('POST', '/api/channel/', { name: 'spark', type: 18, key: 'app|secret|key', models: 'SparkDesk' });
      expect(spark.success).toBe(true);
      expect(
        (await call('PUT', '/api/channel/', { id: spark.data.ids[0], name: 'spark', type: 18, key: 'app|secret', models: 'SparkDesk' }))
          .message,
      ).toBe('the key must be written as APPID|APISecret|APIKey');
      expect((await call('POST', '/api/channel/', { name: 'compat', type: 50, key: 'k', models: 'm' })).message).toBe(
        'this channel type needs a base URL',
      );
      const zhipu = await call('POST', '/api/channel/', { name: 'glm', type: 16, key: 'id.secret', models: 'glm-4-plus' });
      expect((await call('GET', `/api/channel/${zhipu.data.ids[0]}`)).data.other).toBe('v4');
      const gemini = await call('POST', '/api/channel/', { name: 'gemini', type: 24, key: 'AIza-test', models: 'gemini-2.5-flash' });
      expect((await call('GET', `/api/channel/${gemini.data.ids[0]}`)).data).toMatchObject({ type: 24, base_url: '', other: '' });
      for (const id of [spark.data.ids[0], zhipu.data.ids[0], gemini.data.ids[0]]) await call('DELETE', `/api/channel/${id}`);
    });

    it('searches, deletes with abilities, and lists groups and models', async () => {
      const found = await call('GET', '/api/channel/search?keyword=openai');
      expect(found.data.length).toBe(2);
      const id = found.data[0].id;
      expect(await call('DELETE', `/api/channel/${id}/`)).toEqual({ success: true, message: '' });
      expect(await abilitiesOf(id)).toEqual([]);
      expect((await call('GET', '/api/group/')).data).toEqual(['default', 'svip', 'vip']);
      const models = await call('GET', '/api/channel/models');
      expect(models.object).toBe('list');
      expect(models.data.map((model: { id: string }) => model.id)).toContain('gpt-4');
    });
  });
}
