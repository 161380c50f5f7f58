// The console lists beyond one-api's `?p=`: page_size, sort and order, the
// facet filters, the bulk endpoints and the channel jobs' progress, on
// SQLite, PostgreSQL and MySQL. Absent parameters must give one-api's answer:
// 10 rows a page, id DESC.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SORTABLE_COLUMNS } from '../../common/listQuery';
import { channelJobsSettled } from '../../server/channels/channelJobs';
import { insertLog } from '../../server/repositories/logs';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

const targets = await databaseTargets('lists', { besideSqlite: 'mysql' });
const CHANNELS = 12;

for (const target of targets) {
  describe.runIf(target.available)(`list parameters, bulk actions and channel jobs on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let lena: string;
    let emulator: OpenAIEmulator;
    let channelIds: number[] = [];

    const call = (cookie: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
      asBrowser(app, cookie, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    const get = async (url: string, cookie = root) => (await call(cookie, 'GET', url)).json();
    const ids = async (url: string, cookie = root) => ((await get(url, cookie)).data as Array<{ id: number }>).map((row) => row.id);

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await register(app, 'lena');
      await register(app, 'omar');
      lena = await login(app, 'lena', 'password-123');
      channelIds = [];
      for (let index = 0; index < CHANNELS; index += 1) {
        const created = await call(root, 'POST', '/api/channel/', {
          name: `channel-${String(index).padStart(2, '0')}`,
          type: index % 3 === 0 ? 8 : 1,
          key: `sk-${index}`,
          base_url: 'http://127.0.0.1:9',
          models: 'gpt-3.5-turbo',
          group: index % 4 === 0 ? 'default,vip' : 'default',
        });
        channelIds.push(created.json().data.ids[0]);
      }
      // balances out of id order, so a sort by balance is not the default order in disguise
      for (const [index, id] of channelIds.entries()) {
        await app.ctx.db
          .updateTable('channels')
          .set({ balance: (index * 7) % CHANNELS, status: index % 5 === 0 ? 2 : 1 })
          .where('id', '=', id)
          .execute();
      }
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
      await emulator?.close();
    });

    describe('sort, order and page_size', () => {
      it("without them a list is one-api's: 10 rows, newest first, the rest on the next page", async () => {
        const newestFirst = [...channelIds].sort((a, b) => b - a);
        expect(await ids('/api/channel/?p=0')).toEqual(newestFirst.slice(0, 10));
        expect(await ids('/api/channel/?p=1')).toEqual(newestFirst.slice(10));
        expect(await ids('/api/channel/')).toEqual(newestFirst.slice(0, 10));
      });

      it('page_size takes 10, 25, 50 or 100 rows', async () => {
        expect(await ids('/api/channel/?p=0&page_size=25')).toHaveLength(CHANNELS);
        expect(await ids('/api/channel/?p=1&page_size=25')).toEqual([]);
        expect(await ids('/api/channel/?p=0&page_size=10')).toHaveLength(10);
      });

      it('sorts on the server, across pages, ties broken by id DESC', async () => {
        const all = (await get('/api/channel/?page_size=100')).data as Array<{ id: number; balance: number; name: string }>;
        const byBalance = [...all].sort((a, b) => b.balance - a.balance || b.id - a.id).map((row) => row.id);
        expect([
          ...(await ids('/api/channel/?p=0&sort=balance&order=desc')),
          ...(await ids('/api/channel/?p=1&sort=balance&order=desc')),
        ]).toEqual(byBalance);
        const byName = [...all].sort((a, b) => a.name.localeCompare(b.name)).map((row) => row.id);
        expect(await ids('/api/channel/?sort=name&order=asc&page_size=25')).toEqual(byName);
        // an order alone sorts by id; a sort alone is descending
        expect(await ids('/api/channel/?order=asc&page_size=25')).toEqual([...channelIds].sort((a, b) => a - b));
        expect((await ids('/api/channel/?sort=balance&page_size=25'))[0]).toBe(byBalance[0]);
        // `group` is a reserved word in SQL: quoted, it sorts like any column
        expect(await ids('/api/channel/?sort=group&order=asc&page_size=25')).toHaveLength(CHANNELS);
      });

      it('searches sort too', async () => {
        const found = (await get('/api/channel/search?keyword=channel-&sort=balance&order=asc')).data as Array<{ balance: number }>;
        expect(found).toHaveLength(CHANNELS);
        expect(found.map((row) => row.balance)).toEqual([...found.map((row) => row.balance)].sort((a, b) => a - b));
      });

      it('refuses a column off the whitelist, an unknown order or page size with the 400 envelope', async () => {
        for (const url of [
          '/api/channel/?sort=key',
          '/api/channel/?order=up',
          '/api/channel/?page_size=7',
          '/api/channel/?sort=id;drop',
          '/api/token/?sort=key',
          '/api/user/?sort=password_hash',
          '/api/redemption/?sort=key',
          '/api/log/?sort=content',
          '/api/log/self?page_size=1000',
          '/api/channel/search?keyword=a&sort=key',
        ]) {
          const response = await call(root, 'GET', url);
          expect(response.statusCode, url).toBe(400);
          expect(response.json(), url).toMatchObject({ success: false });
        }
        expect((await call(root, 'GET', '/api/channel/?sort=key')).json().message).toContain('sort');
      });

      it('every whitelisted column sorts every list', async () => {
        for (const resource of ['channel', 'token', 'redemption', 'user'] as const) {
          for (const column of SORTABLE_COLUMNS[resource]) {
            for (const order of ['asc', 'desc']) {
              const body = await get(`/api/${resource}/?sort=${column}&order=${order}`);
              expect(body.success, `${resource} ${column} ${order}`).toBe(true);
            }
          }
        }
        for (const column of SORTABLE_COLUMNS.log) expect((await get(`/api/log/?sort=${column}&order=asc`)).success, column).toBe(true);
      });

      it('tokens, codes, users and logs sort and page alike', async () => {
        for (const quota of [300, 100, 200]) await call(lena, 'POST', '/api/token/', { name: `t${quota}`, remain_quota: quota });
        expect(
          ((await get('/api/token/?sort=remain_quota&order=desc', lena)).data as Array<{ remain_quota: number }>).map(
            (row) => row.remain_quota,
          ),
        ).toEqual([300, 200, 100]);
        expect(((await get('/api/token/?p=0', lena)).data as Array<{ name: string }>).map((row) => row.name)).toEqual([
          't200',
          't100',
          't300',
        ]);

        for (const quota of [5, 50, 20]) await call(root, 'POST', '/api/redemption/', { name: `code${quota}`, quota, count: 1 });
        expect(((await get('/api/redemption/?sort=quota&order=asc')).data as Array<{ quota: number }>).map((row) => row.quota)).toEqual([
          5, 20, 50,
        ]);

        await app.ctx.db.updateTable('users').set({ quota: 999_999_999 }).where('username', '=', 'omar').execute();
        expect((await get('/api/user/?sort=quota&order=desc')).data[0].username).toBe('omar');
        expect(((await get('/api/user/?role=100')).data as Array<{ username: string }>).map((row) => row.username)).toEqual(['root']);
        expect(
          ((await get('/api/user/search?keyword=&role=1&sort=username&order=asc')).data as Array<{ username: string }>).map(
            (row) => row.username,
          ),
        ).toEqual(['lena', 'omar']);

        const lenaId = Number(
          (await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'lena').executeTakeFirstOrThrow()).id,
        );
        for (let index = 0; index < 30; index += 1) {
          await insertLog(app.ctx.db, {
            userId: lenaId,
            username: 'lena',
            type: 2,
            content: 'x',
            quota: (index * 11) % 30,
            modelName: 'gpt-4',
            channelId: index % 2 ? channelIds[0] : channelIds[1],
          });
        }
        expect(await ids('/api/log/?p=0', root)).toHaveLength(10);
        expect(await ids('/api/log/self?p=0&page_size=25', lena)).toHaveLength(25);
        const top = (await get('/api/log/?sort=quota&order=desc&page_size=10')).data as Array<{ quota: number }>;
        expect(top[0].quota).toBe(29);
        expect(((await get(`/api/log/?channel=${channelIds[0]}&page_size=50`)).data as unknown[]).length).toBe(15);
        // the channel filter is an admin's: a user's own list ignores it
        expect(((await get(`/api/log/self?channel=${channelIds[0]}&page_size=50`, lena)).data as unknown[]).length).toBe(30);
      });
    });

    describe('facets', () => {
      it('filters channels by status, type and one group of the comma list', async () => {
        const rows = (await get('/api/channel/?page_size=100')).data as Array<{ id: number; status: number; type: number; group: string }>;
        expect(await ids('/api/channel/?status=2&page_size=100')).toEqual(rows.filter((row) => row.status === 2).map((row) => row.id));
        expect(await ids('/api/channel/?type=8&page_size=100')).toEqual(rows.filter((row) => row.type === 8).map((row) => row.id));
        const vip = rows.filter((row) => row.group.split(',').includes('vip')).map((row) => row.id);
        expect(vip.length).toBeGreaterThan(0);
        expect(await ids('/api/channel/?group=vip&page_size=100')).toEqual(vip);
        expect(await ids('/api/channel/?group=vi&page_size=100')).toEqual([]);
        expect(await ids('/api/channel/search?keyword=channel&group=vip&status=1')).toEqual(
          rows.filter((row) => vip.includes(row.id) && row.status === 1).map((row) => row.id),
        );
        expect((await call(root, 'GET', '/api/channel/?status=x')).statusCode).toBe(400);
      });

      it('filters tokens and codes by status', async () => {
        const tokens = (await get('/api/token/?page_size=100', lena)).data as Array<{ id: number }>;
        await call(lena, 'POST', '/api/token/bulk', { ids: [tokens[0].id], action: 'disable' });
        expect(await ids('/api/token/?status=2', lena)).toEqual([tokens[0].id]);
        expect(await ids('/api/token/search?keyword=t&status=2', lena)).toEqual([tokens[0].id]);
        expect(await ids('/api/redemption/?status=3')).toEqual([]);
      });
    });

    describe('bulk actions', () => {
      it('channels: enable, disable, delete, each id answered for', async () => {
        const [first, second] = channelIds;
        const disabled = await call(root, 'POST', '/api/channel/bulk', { ids: [first, second, 999_999], action: 'disable' });
        expect(disabled.json()).toEqual({
          success: true,
          message: '',
          data: { done: [first, second], failed: [{ id: 999_999, message: 'channel not found' }] },
        });
        const states = await app.ctx.db.selectFrom('channels').select(['status']).where('id', 'in', [first, second]).execute();
        expect(states.map((row) => Number(row.status))).toEqual([2, 2]);
        // the routing index follows
        const abilities = await app.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', 'in', [first, second]).execute();
        expect(abilities.every((row) => Number(row.enabled) === 0)).toBe(true);
        expect((await call(root, 'POST', '/api/channel/bulk', { ids: [first, second], action: 'enable' })).json().data.done).toEqual([
          first,
          second,
        ]);
        const extra = (await call(root, 'POST', '/api/channel/', { name: 'doomed', type: 1, key: 'sk-x', models: 'gpt-4' })).json().data
          .ids[0];
        expect((await call(root, 'POST', '/api/channel/bulk', { ids: [extra], action: 'delete' })).json().data.done).toEqual([extra]);
        expect(await app.ctx.db.selectFrom('channels').select('id').where('id', '=', extra).executeTakeFirst()).toBeUndefined();
      });

      it("tokens: only the caller's own; enabling an expired token is refused", async () => {
        const mine = (await get('/api/token/?page_size=100', lena)).data as Array<{ id: number }>;
        const rootToken = (await call(root, 'POST', '/api/token/', { name: 'roots', remain_quota: 1 })).json().data.id;
        const answer = (await call(lena, 'POST', '/api/token/bulk', { ids: [mine[1].id, rootToken], action: 'disable' })).json();
        expect(answer.data).toEqual({ done: [mine[1].id], failed: [{ id: rootToken, message: 'token not found' }] });
        expect((await get(`/api/token/${rootToken}`, root)).data.status).toBe(1);
        await app.ctx.db.updateTable('tokens').set({ expired_time: 1 }).where('id', '=', mine[1].id).execute();
        expect(
          (await call(lena, 'POST', '/api/token/bulk', { ids: [mine[1].id], action: 'enable' })).json().data.failed[0].message,
        ).toContain('expired');
        expect((await call(lena, 'POST', '/api/token/bulk', { ids: [mine[1].id, rootToken], action: 'delete' })).json().data.done).toEqual([
          mine[1].id,
        ]);
        expect(await app.ctx.db.selectFrom('tokens').select('id').where('id', '=', rootToken).executeTakeFirst()).toBeDefined();
      });

      it('codes: admins only; a used code keeps its status', async () => {
        const codes = (await get('/api/redemption/?page_size=100')).data as Array<{ id: number }>;
        await app.ctx.db.updateTable('redemptions').set({ status: 3 }).where('id', '=', codes[0].id).execute();
        const answer = (await call(root, 'POST', '/api/redemption/bulk', { ids: [codes[0].id, codes[1].id], action: 'disable' })).json();
        expect(answer.data).toEqual({ done: [codes[1].id], failed: [{ id: codes[0].id, message: 'a used code cannot be changed' }] });
        expect((await call(lena, 'POST', '/api/redemption/bulk', { ids: [codes[1].id], action: 'delete' })).json()).toEqual({
          success: false,
          message: 'insufficient permission',
          code: 'permission_denied',
        });
        expect((await call(root, 'POST', '/api/redemption/bulk', { ids: [codes[1].id], action: 'delete' })).json().data.done).toEqual([
          codes[1].id,
        ]);
      });

      it('refuses a malformed request', async () => {
        for (const payload of [
          { ids: [], action: 'delete' },
          { ids: [1], action: 'explode' },
          { ids: ['1; drop'], action: 'delete' },
          { ids: Array.from({ length: 101 }, (_, index) => index + 1), action: 'enable' },
          { ids: [1] },
        ]) {
          const response = await call(root, 'POST', '/api/channel/bulk', payload);
          expect(response.statusCode, JSON.stringify(payload).slice(0, 60)).toBe(400);
          expect(response.json().success).toBe(false);
        }
      });
    });

    describe('channel jobs', () => {
      it('test-all returns a job whose progress, failures and end the console can read; the list shows each last error', async () => {
        await app.ctx.db.updateTable('channels').set({ status: 2 }).execute();
        const good = (
          await call(root, 'POST', '/api/channel/', {
            name: 'alive',
            type: 8,
            key: 'sk-good',
            base_url: emulator.baseUrl,
            models: 'gpt-3.5-turbo',
          })
        ).json().data.ids[0];
        const dead = (
          await call(root, 'POST', '/api/channel/', {
            name: 'dead-port',
            type: 8,
            key: 'sk-good',
            base_url: 'http://127.0.0.1:9',
            models: 'gpt-3.5-turbo',
          })
        ).json().data.ids[0];
        const started = await get('/api/channel/test');
        expect(started).toMatchObject({ success: true, message: '', data: { kind: 'test', state: 'running' } });
        const jobId = started.data.id as string;
        await channelJobsSettled(app.ctx);
        const job = await get(`/api/channel/jobs/${jobId}`);
        expect(job.data).toMatchObject({ id: jobId, kind: 'test', state: 'done', done: 2, total: 2 });
        expect(job.data.failures).toEqual([
          { channel_id: dead, name: 'dead-port', message: expect.stringContaining('could not reach upstream') },
        ]);
        expect(job.data.finished_at).toBeGreaterThanOrEqual(job.data.started_at);

        const listed = (await get('/api/channel/?status=1')).data as Array<{ id: number; test_error: string; test_time: number }>;
        expect(listed.find((row) => row.id === dead)).toMatchObject({ test_error: expect.stringContaining('could not reach upstream') });
        expect(listed.find((row) => row.id === good)).toMatchObject({ test_error: '' });
        // a pass clears the error
        await app.ctx.db.updateTable('channels').set({ base_url: emulator.baseUrl }).where('id', '=', dead).execute();
        expect((await get(`/api/channel/test/${dead}`)).success).toBe(true);
        expect((await get(`/api/channel/${dead}`)).data.test_error).toBe('');

        const balances = await get('/api/channel/update_balance');
        expect(balances.data).toMatchObject({ kind: 'balance' });
        await channelJobsSettled(app.ctx);
        expect((await get(`/api/channel/jobs/${balances.data.id}`)).data).toMatchObject({ state: 'done', done: 2, total: 2 });

        expect(await get('/api/channel/jobs/no-such-job')).toMatchObject({ success: false });
        expect((await call(root, 'GET', '/api/channel/jobs/..%2Fetc')).statusCode).toBe(400);
        expect((await call(lena, 'GET', `/api/channel/jobs/${jobId}`)).json()).toEqual({
          success: false,
          message: 'insufficient permission',
          code: 'permission_denied',
        });
      });
    });
  });
}
