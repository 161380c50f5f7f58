// Today's vendors' balances (DeepSeek 36, Moonshot 25, OpenRouter 20,
// SiliconFlow 44, Novita 41, StepFun 32) read through the channel API from the OpenAI emulator, which
// answers their documented shapes, and saved in the unit their rows name; the
// currency refusals that keep a figure from being shown in the wrong unit.
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findChannelType } from '../../common/channelTypes';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

const targets = await databaseTargets('channel_balance', { besideSqlite: 'mysql' });

for (const target of targets) {
  describe.runIf(target.available)(`today's vendors' balances on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let emulator: OpenAIEmulator;
    /** A DeepSeek look-alike whose answer each test sets. */
    let deepSeek: Server;
    let deepSeekUrl: string;
    let deepSeekAnswer: unknown;

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      deepSeek = createServer((_request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(deepSeekAnswer));
      });
      await new Promise<void>((resolveListen) => deepSeek.listen(0, '127.0.0.1', () => resolveListen()));
      deepSeekUrl = `http://127.0.0.1:${(deepSeek.address() as AddressInfo).port}`;
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
      await emulator?.close();
      await new Promise((resolveClose) => deepSeek?.close(resolveClose));
    });
    beforeEach(async () => {
      await app.ctx.db.deleteFrom('abilities').execute();
      await app.ctx.db.deleteFrom('channels').execute();
    });

    const get = (url: string) => asBrowser(app, root, { method: 'GET', url }).then((response) => response.json());
    const addChannel = async (type: number, baseUrl: string, key = 'sk-good') => {
      const created = await asBrowser(app, root, {
        method: 'POST',
        url: '/api/channel/',
        payload: { name: `type ${type}`, type, key, models: 'gpt-3.5-turbo', base_url: baseUrl, model_mapping: '' },
      });
      expect(created.json().success).toBe(true);
      return created.json().data.ids[0] as number;
    };
    const savedBalance = async (id: number) => {
      const row = await app.ctx.db
        .selectFrom('channels')
        .select(['balance', 'balance_updated_time'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return { balance: Number(row.balance), updated: Number(row.balance_updated_time) };
    };

    it('reads each vendor at its own path with the key as Bearer, saves it and names its unit', async () => {
      const expected: Array<[type: number, path: string, balance: number, unit: string]> = [
        [36, '/user/balance', 110, 'cny'],
        [25, '/v1/users/me/balance', 49.58894, 'cny'],
        [20, '/api/v1/credits', 74.75, 'usd'],
        [44, '/v1/user/info', 88.88, 'cny'],
        [41, '/openapi/v1/billing/balance/detail', 123.45, 'usd'],
        [32, '/v1/accounts', 26.5, 'cny'],
      ];
      for (const [type, path, balance, unit] of expected) {
        const id = await addChannel(type, emulator.baseUrl);
        const since = emulator.requests.length;
        expect(await get(`/api/channel/update_balance/${id}`), `type ${type}`).toEqual({ success: true, message: '', balance });
        const asked = emulator.requests.slice(since);
        expect(
          asked.map((request) => `${request.method} ${request.path}`),
          `type ${type}`,
        ).toEqual([`GET ${path}`]);
        expect(asked[0].headers.authorization).toBe('Bearer sk-good');
        const saved = await savedBalance(id);
        expect(saved.balance, `type ${type}`).toBe(balance);
        expect(Math.abs(saved.updated - Date.now() / 1000)).toBeLessThan(10);
        expect(findChannelType(type)?.balance?.unit, `type ${type}`).toBe(unit);
      }
    });

    it("passes on the vendor's refusal (a dead key) and saves nothing", async () => {
      for (const type of [36, 25, 20, 44, 41, 32]) {
        const id = await addChannel(type, emulator.baseUrl, 'sk-dead');
        expect(await get(`/api/channel/update_balance/${id}`), `type ${type}`).toEqual({
          success: false,
          message: 'Incorrect API key provided. (type invalid_request_error, code invalid_api_key)',
        });
        expect((await savedBalance(id)).updated).toBe(0);
      }
    });

    it('reads the CNY entry of a DeepSeek account, and refuses one whose money is in USD rather than show dollars as yuan', async () => {
      const id = await addChannel(36, deepSeekUrl);
      deepSeekAnswer = {
        is_available: true,
        balance_infos: [
          { currency: 'USD', total_balance: '0.00', granted_balance: '0.00', topped_up_balance: '0.00' },
          { currency: 'CNY', total_balance: '12.34', granted_balance: '2.34', topped_up_balance: '10.00' },
        ],
      };
      expect(await get(`/api/channel/update_balance/${id}`)).toEqual({ success: true, message: '', balance: 12.34 });

      deepSeekAnswer = {
        is_available: true,
        balance_infos: [{ currency: 'USD', total_balance: '5.00', granted_balance: '0.00', topped_up_balance: '5.00' }],
      };
      expect(await get(`/api/channel/update_balance/${id}`)).toEqual({
        success: false,
        message: "this account's balance is held in another currency (5.00 USD); this channel type records balances in CNY",
      });
      expect((await savedBalance(id)).balance).toBe(12.34);

      // an account that holds nothing anywhere has nothing, in any unit
      deepSeekAnswer = {
        is_available: false,
        balance_infos: [{ currency: 'USD', total_balance: '0.00', granted_balance: '0.00', topped_up_balance: '0.00' }],
      };
      expect(await get(`/api/channel/update_balance/${id}`)).toEqual({ success: true, message: '', balance: 0 });
    });

    it("refuses a channel on Moonshot's, SiliconFlow's or StepFun's international platform without asking it", async () => {
      // nothing may leave the machine: any request to those hosts would fail here rather than go out
      const previous = getGlobalDispatcher();
      const agent = new MockAgent();
      agent.disableNetConnect();
      setGlobalDispatcher(agent);
      try {
        const moonshot = await addChannel(25, 'https://api.moonshot.ai');
        expect(await get(`/api/channel/update_balance/${moonshot}`)).toEqual({
          success: false,
          message: 'api.moonshot.ai reports balances in USD; Moonshot Kimi balances are recorded in CNY',
        });
        const siliconFlow = await addChannel(44, 'https://api.siliconflow.com/');
        expect(await get(`/api/channel/update_balance/${siliconFlow}`)).toEqual({
          success: false,
          message: 'api.siliconflow.com reports balances in USD; SiliconFlow balances are recorded in CNY',
        });
        const stepFun = await addChannel(32, 'https://api.stepfun.ai');
        expect(await get(`/api/channel/update_balance/${stepFun}`)).toEqual({
          success: false,
          message: 'api.stepfun.ai reports balances in USD; StepFun balances are recorded in CNY',
        });
        expect((await savedBalance(moonshot)).updated).toBe(0);
        expect((await savedBalance(stepFun)).updated).toBe(0);
      } finally {
        setGlobalDispatcher(previous);
        await agent.close();
      }
    });
  });
}
