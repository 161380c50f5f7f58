// Anthropic's Message Batches on the gateway, through the official
// @anthropic-ai/sdk client, on SQLite and PostgreSQL (the batch's money moves
// line by line in dialect SQL): one batch mixes a model an Anthropic channel
// serves and one an OpenAI channel serves (its lines translated), a line the
// vendor refuses comes back errored, the others succeeded, each billed once
// with one consume log naming the batch and its custom_id. A cancelled batch
// gives back what its unrun lines held; the list pages as Anthropic's does;
// another user reads none of it. The ledger's invariant (start - logged
// charges - held = balance; nothing held when idle) is checked after every step.
import Anthropic from '@anthropic-ai/sdk';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { DatabaseConfig } from '../../server/config';
import type { Database } from '../../server/db/database';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { batchPass } from '../support/batchRuns';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../support/emulators/anthropic';
import { ledgerState } from '../support/ledgerState';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const TOKEN_START = 50_000_000;
const CONFIG = { batches: { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 }, quotaLeases: false };
const CLAUDE = ANTHROPIC_CHANNELS[0];
const GPT = 'gpt-3.5-turbo';
const request = (customId: string, model: string, text = 'hello batch', role: 'user' | 'assistant' = 'user') => ({
  custom_id: customId,
  params: { model, max_tokens: 50, messages: [{ role, content: text }] },
});

const targets = await databaseTargets('messageBatches', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`message batches on ${target.name}`, () => {
    let database: { config: DatabaseConfig; drop(): Promise<void> };
    let app: FastifyInstance;
    let db: Kysely<Database>;
    let anthropicUpstream: AnthropicEmulator;
    let openaiUpstream: OpenAIEmulator;
    let baseUrl = '';
    let root = '';
    let apiKey = '';
    let tokenId = 0;
    let userStart = 0;
    let client: Anthropic;
    const created: string[] = [];

    const admin = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const batchLogs = (batchId: string) =>
      db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('content', 'like', `batch ${batchId},%`).execute();
    const expectInvariant = async () => {
      const state = await ledgerState(db, 1, tokenId);
      const tasks = await db.selectFrom('tasks').select('held_quota').execute();
      expect(state.quota + state.userHeld + state.logged).toBe(userStart);
      expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
      expect(state.userHeld).toBe(tasks.reduce((sum, row) => sum + Number(row.held_quota), 0));
      return state;
    };
    /** Runner passes until the batch has ended, polled with the client as a user would. */
    const pollToEnded = async (id: string) => {
      for (let pass = 0; pass < 200; pass += 1) {
        const batch = await client.messages.batches.retrieve(id);
        if (batch.processing_status === 'ended') return batch;
        await batchPass([app]);
        await expectInvariant();
      }
      throw new Error(`message batch ${id} never ended`);
    };
    const resultsOf = async (id: string) => {
      const results: Anthropic.Messages.Batches.MessageBatchIndividualResponse[] = [];
      for await (const line of await client.messages.batches.results(id)) results.push(line);
      return results;
    };

    beforeAll(async () => {
      [anthropicUpstream, openaiUpstream] = await Promise.all([startAnthropicEmulator(), startOpenAIEmulator()]);
      database = await sharedDatabase(target);
      app = await buildTestApp(CONFIG, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      root = await login(app, 'root', ROOT_PASSWORD);
      const channels = [
        { type: CLAUDE.type, name: 'claude', key: CLAUDE.key, base_url: CLAUDE.baseUrl(anthropicUpstream), models: CLAUDE.chatModel },
        { type: 1, name: 'openai', key: 'sk-batch-channel', base_url: openaiUpstream.baseUrl, models: GPT },
      ];
      for (const channel of channels) expect((await admin('POST', '/api/channel/', { ...channel, group: 'default' })).success).toBe(true);
      const token = await admin('POST', '/api/token/', { name: 'message-batches', remain_quota: TOKEN_START });
      apiKey = `sk-${token.data.key}`;
      tokenId = token.data.id as number;
      client = new Anthropic({ apiKey, baseURL: baseUrl, maxRetries: 0 });
      const state = await ledgerState(db, 1, tokenId);
      userStart = state.quota + state.userHeld + state.logged;
    });

    afterAll(async () => {
      await app?.close();
      await anthropicUpstream?.close();
      await openaiUpstream?.close();
      await database?.drop();
    });

    it('runs a batch on an Anthropic and an OpenAI channel: results by custom_id, each line billed once at the discount', async () => {
      const batch = await client.messages.batches.create({
        requests: [
          request('claude-line', CLAUDE.chatModel, 'hello claude'),
          request('gpt-line', GPT, 'hello gpt'),
          // the vendor refuses a conversation that opens with the assistant: an errored line, billed nothing
          request('refused-line', CLAUDE.chatModel, 'I speak first', 'assistant'),
        ] as never,
      });
      created.push(batch.id);
      expect(batch).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, archived_at: null });
      expect(batch.id).toMatch(/^msgbatch_/);
      expect(batch.request_counts).toEqual({ processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
      expect(Date.parse(batch.expires_at) - Date.parse(batch.created_at)).toBe(24 * 3600 * 1000);
      expect((await expectInvariant()).userHeld).toBeGreaterThan(0);

      const ended = await pollToEnded(batch.id);
      expect(ended.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
      expect(ended.ended_at).not.toBeNull();
      expect(ended.results_url).toBe(`${baseUrl}/v1/messages/batches/${batch.id}/results`);
      const results = await resultsOf(batch.id);
      expect(results.map((line) => line.custom_id)).toEqual(['claude-line', 'gpt-line', 'refused-line']);
      const [claude, gpt, refused] = results.map((line) => line.result);
      expect(claude).toMatchObject({ type: 'succeeded', message: { type: 'message', role: 'assistant', model: CLAUDE.chatModel } });
      expect(JSON.stringify(claude)).toContain('Hello from Anthropic, you said: hello claude');
      expect(gpt).toMatchObject({ type: 'succeeded', message: { type: 'message', role: 'assistant', stop_reason: 'end_turn' } });
      expect(refused).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error' } } });

      const logs = await batchLogs(batch.id);
      expect(logs.map((log) => /custom_id ([\w-]+)/.exec(log.content)![1]).sort()).toEqual(['claude-line', 'gpt-line']);
      for (const log of logs) {
        expect(log.content).toContain('batch discount 0.5');
        expect(JSON.parse(log.other!)).toMatchObject({ taskId: batch.id, operation: '/v1/messages' });
      }
      const task = await db.selectFrom('tasks').selectAll().where('id', '=', batch.id).executeTakeFirstOrThrow();
      expect(task).toMatchObject({ kind: 'message_batch', status: 'completed' });
      expect(Number(task.held_quota)).toBe(0);
      expect(Number(task.charged_quota)).toBe(logs.reduce((sum, log) => sum + Number(log.quota), 0));
      expect((await expectInvariant()).userHeld).toBe(0);
      // a Message Batch writes no files: its results are read from its lines
      expect(await db.selectFrom('files').select('id').where('filename', 'like', `${batch.id}%`).execute()).toEqual([]);
    });

    it('cancels a batch: unrun lines refunded and canceled, an unfinished batch not deletable', async () => {
      const batch = await client.messages.batches.create({
        requests: ['a', 'b', 'c'].map((id) => request(id, CLAUDE.chatModel)),
      });
      created.push(batch.id);
      expect((await expectInvariant()).userHeld).toBeGreaterThan(0);
      await expect(client.messages.batches.delete(batch.id)).rejects.toMatchObject({ status: 400 });
      const cancelling = await client.messages.batches.cancel(batch.id);
      expect(cancelling).toMatchObject({ processing_status: 'canceling', request_counts: { processing: 0, canceled: 3 } });
      expect(cancelling.cancel_initiated_at).not.toBeNull();
      expect((await expectInvariant()).userHeld).toBe(0);
      const ended = await pollToEnded(batch.id);
      expect(ended.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 3, expired: 0 });
      expect((await resultsOf(batch.id)).map((line) => [line.custom_id, line.result.type])).toEqual([
        ['a', 'canceled'],
        ['b', 'canceled'],
        ['c', 'canceled'],
      ]);
      expect(await batchLogs(batch.id)).toEqual([]);
      await expectInvariant();
    });

    it("pages the list as Anthropic's does, and refuses what it cannot take, holding nothing", async () => {
      const third = await client.messages.batches.create({ requests: [request('only', GPT)] as never });
      created.push(third.id);
      await pollToEnded(third.id);
      const newestFirst = [...created].reverse();
      const seen: string[] = [];
      for await (const batch of client.messages.batches.list({ limit: 1 })) seen.push(batch.id);
      expect(seen).toEqual(newestFirst);
      const before = await client.messages.batches.list({ before_id: newestFirst[2], limit: 1 });
      expect(before.data.map((batch) => batch.id)).toEqual([newestFirst[1]]);
      expect(before.has_more).toBe(true);
      const after = await client.messages.batches.list({ after_id: newestFirst[0], limit: 5 });
      expect(after).toMatchObject({ has_more: false, first_id: newestFirst[1], last_id: newestFirst[2] });

      const refusals: [unknown, number, string][] = [
        [{ requests: [] }, 400, 'requests:'],
        [{ requests: [request('same', GPT), request('same', GPT)] }, 400, 'requests.1: custom_id'],
        [{ requests: [request('bad id!', GPT)] }, 400, 'requests.0: custom_id'],
        [{ requests: [request('fine', GPT), request('unknown-model', 'no-such-model')] }, 403, 'requests.1: '],
        [
          { requests: [{ custom_id: 'streamed', params: { ...request('x', GPT).params, stream: true } }] },
          400,
          'requests.0: params.stream',
        ],
      ];
      for (const [body, status, words] of refusals) {
        const refused = await client.messages.batches.create(body as never).catch((error: unknown) => error);
        expect(refused).toMatchObject({ status, error: { type: 'error', error: { message: expect.stringContaining(words) } } });
      }
      // a key whose budget cannot cover the batch's bound is refused as /v1/batches refuses it
      const budgeted = await admin('POST', '/api/token/', {
        name: 'tight',
        remain_quota: TOKEN_START,
        budget_period: 'day',
        budget_quota: 1,
      });
      const tight = new Anthropic({ apiKey: `sk-${budgeted.data.key}`, baseURL: baseUrl, maxRetries: 0 });
      await expect(tight.messages.batches.create({ requests: [request('over', GPT)] })).rejects.toMatchObject({ status: 429 });
      expect((await expectInvariant()).userHeld).toBe(0);

      const deleted = await client.messages.batches.delete(third.id);
      expect(deleted).toEqual({ id: third.id, type: 'message_batch_deleted' });
      await expect(client.messages.batches.retrieve(third.id)).rejects.toMatchObject({ status: 404 });
      await expect(client.messages.batches.results(third.id)).rejects.toMatchObject({ status: 404 });
      expect(await db.selectFrom('batch_lines').select('line').where('task_id', '=', third.id).execute()).toEqual([]);
      await expectInvariant();
    });

    it("answers another user's key as if the batch did not exist; bad keys in Anthropic's error shape", async () => {
      await register(app, 'mb-other');
      const other = await login(app, 'mb-other', 'password-123');
      const token = (await asBrowser(app, other, { method: 'POST', url: '/api/token/', payload: { name: 'other' } })).json();
      const stranger = new Anthropic({ apiKey: `sk-${token.data.key}`, baseURL: baseUrl, maxRetries: 0 });
      const id = created[0];
      await expect(stranger.messages.batches.retrieve(id)).rejects.toMatchObject({ status: 404 });
      await expect(stranger.messages.batches.cancel(id)).rejects.toMatchObject({ status: 404 });
      await expect(stranger.messages.batches.delete(id)).rejects.toMatchObject({ status: 404 });
      const results = await fetch(`${baseUrl}/v1/messages/batches/${id}/results`, { headers: { 'x-api-key': `sk-${token.data.key}` } });
      expect(results.status).toBe(404);
      expect((await stranger.messages.batches.list()).data).toEqual([]);
      const anonymous = await fetch(`${baseUrl}/v1/messages/batches/${id}`, { headers: { 'x-api-key': 'sk-not-a-key' } });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      // the owner reads it with a Bearer key as well as with x-api-key
      const owned = await fetch(`${baseUrl}/v1/messages/batches/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(await owned.json()).toMatchObject({ id, type: 'message_batch', processing_status: 'ended' });
    });
  });
}
