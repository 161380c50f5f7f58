// A node killed mid-batch: a gateway process on PostgreSQL runs a batch the
// gateway runs itself, its lines slow upstream, and is killed with SIGKILL
// while lines are running under its leases. The batch's hold and its queued
// and running lines are in the database, so nothing is lost: another node
// takes the dead node's lines over once their leases have run out, runs the
// rest and closes the batch. Every line is then billed exactly once (one
// consume log per custom_id) and the ledger read from the database is exact:
// start - logged charges = balance, nothing held.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import type { Database } from '../../../server/db/database';
import { findTaskById } from '../../../server/repositories/tasks';
import { batchRunnerOf } from '../../../server/routes/v1/batches';
import { buildTestApp } from '../../support/app';
import { rootConsole, type GatewayProcess } from '../../support/gatewayProcess';
import { ledgerState } from '../../support/ledgerState';
import { databaseTargets } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';
import { startKillableNode, waitFor, type KillableNode } from './killedNode';

const ROOT_PASSWORD = 'batch-kill-root-password';
const USER_START = 50_000_000;
const TOKEN_START = 30_000_000;
const LINES = 8;

const targets = (await databaseTargets('a node killed mid-batch')).filter((target) => target.name === 'postgres');

for (const target of targets) {
  describe.runIf(target.available)(`a node killed mid-batch on ${target.name}`, () => {
    let killable: KillableNode | undefined;
    let db: Kysely<Database>;
    let node: GatewayProcess | undefined;
    let emulator: OpenAIEmulator;
    let survivor: FastifyInstance | undefined;

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      killable = await startKillableNode(target, 'batch-kill', {
        INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
        BATCH_LEASE_SECONDS: '2',
      });
      ({ db, node } = killable);
    });

    afterAll(async () => {
      await node?.stop('SIGKILL');
      await survivor?.close();
      await emulator?.close();
      await killable?.close();
    });

    it('leaves the dead node its lines to another node once their leases run out, each billed once', async () => {
      const admin = await rootConsole(node!.baseUrl, ROOT_PASSWORD);
      // the gateway runs this batch itself, line by line, as an OpenAI channel's would otherwise go to OpenAI's Batch API
      await admin('/api/option/', { key: 'BatchUpstreamEnabled', value: 'false' }, 'PUT');
      // sk-slow: every answer takes SLOW_KEY_DELAY_MS, so the node is killed with lines under way
      await admin('/api/channel/', { name: 'openai', type: 1, key: 'sk-slow', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
      const token = await admin('/api/token/', { name: 'batch kill', remain_quota: TOKEN_START });
      const tokenId = Number(token.id);
      await db.updateTable('users').set({ quota: USER_START }).where('id', '=', 1).execute();
      const authorization = `Bearer sk-${token.key}`;

      const lines = Array.from({ length: LINES }, (_, index) => ({
        custom_id: `kill-${index}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: `line ${index}` }], max_tokens: 20 },
      }));
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob([lines.map((line) => JSON.stringify(line)).join('\n')]), 'input.jsonl');
      const uploaded = await fetch(`${node!.baseUrl}/v1/files`, { method: 'POST', headers: { authorization }, body: form });
      const file = (await uploaded.json()) as { id: string };
      const created = await fetch(`${node!.baseUrl}/v1/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };

      // the node is running lines, under its leases, when it is killed
      await waitFor(
        'lines under way',
        async () => {
          const running = await db
            .selectFrom('batch_lines')
            .select('line')
            .where('task_id', '=', id)
            .where('status', '=', 'running')
            .execute();
          return running.length > 0 && emulator.requests.some((request) => request.path.endsWith('/chat/completions'));
        },
        20_000,
      );
      await node!.stop('SIGKILL');
      const held = await ledgerState(db, 1, tokenId);
      expect(held.userHeld).toBeGreaterThan(0);
      expect(held.quota + held.userHeld + held.logged).toBe(USER_START);

      survivor = await buildTestApp({ batches: { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 } }, killable!.database.config);
      await waitFor(
        'the survivor to finish the batch',
        async () => {
          await batchRunnerOf(survivor!)!.runOnce();
          await batchRunnerOf(survivor!)!.idle();
          return (await findTaskById(db, id))?.status === 'completed';
        },
        20_000,
      );

      const logs = await db
        .selectFrom('logs')
        .select(['content', 'quota'])
        .where('type', '=', LogType.consume)
        .where('token_id', '=', tokenId)
        .execute();
      const billed = logs.map((log) => /custom_id (kill-\d+)/.exec(log.content)?.[1]).sort();
      expect(billed).toEqual(lines.map((line) => line.custom_id).sort());
      // the lines the dead node was running were run again by the survivor, and still billed once
      const rerun = await db.selectFrom('batch_lines').select('line').where('task_id', '=', id).where('attempts', '>', 1).execute();
      expect(rerun.length).toBeGreaterThan(0);
      const task = await findTaskById(db, id);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      const now = await ledgerState(db, 1, tokenId);
      expect(now).toMatchObject({ userHeld: 0, tokenHeld: 0 });
      expect(now.logged).toBe(Number(task!.charged_quota));
      expect(now.quota).toBe(USER_START - now.logged);
      expect(now.remain).toBe(TOKEN_START - now.logged);
    });
  });
}
