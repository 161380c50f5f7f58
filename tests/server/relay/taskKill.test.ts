// A node killed mid-poll of a video: a gateway process on PostgreSQL takes a
// video and starts polling it; the vendor does not answer that poll, and the
// node is killed with SIGKILL while it waits, holding the poll's lease. The
// task's hold is in the database, so nothing is lost: another node takes the
// poll over once the lease has run out and settles the video once. The
// ledger read from the database is then exact: start - logged charges = balance,
// nothing held, one consume log naming the video.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import type { Database } from '../../../server/db/database';
import { findTaskById } from '../../../server/repositories/tasks';
import { buildTestApp } from '../../support/app';
import { rootConsole, type GatewayProcess } from '../../support/gatewayProcess';
import { ledgerState } from '../../support/ledgerState';
import { databaseTargets } from '../../support/databases';
import { startVideoEmulator, type VideoEmulator } from '../../support/emulators/videoEmulator';
import { startKillableNode, waitFor, type KillableNode } from './killedNode';

const ROOT_PASSWORD = 'task-kill-root-password';
const USER_START = 5_000_000;
const TOKEN_START = 3_000_000;
/** 8 s of sora-2 at $0.10 a second. */
const EIGHT_SECONDS = 400_000;

const targets = (await databaseTargets('a node killed mid-poll of a video')).filter((target) => target.name === 'postgres');

for (const target of targets) {
  describe.runIf(target.available)(`a node killed mid-poll of a video on ${target.name}`, () => {
    let killable: KillableNode | undefined;
    let db: Kysely<Database>;
    let node: GatewayProcess | undefined;
    let emulator: VideoEmulator;
    let survivor: FastifyInstance | undefined;

    beforeAll(async () => {
      emulator = await startVideoEmulator();
      killable = await startKillableNode(target, 'task-kill', {
        INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
        TASK_POLL_SECONDS: '0.2',
        TASK_LEASE_SECONDS: '2',
      });
      ({ db, node } = killable);
    });

    afterAll(async () => {
      await node?.stop('SIGKILL');
      await survivor?.close();
      await emulator?.close();
      await killable?.close();
    });

    it('leaves the video to another node once the lease runs out, billed once', async () => {
      const admin = await rootConsole(node!.baseUrl, ROOT_PASSWORD);
      await admin('/api/channel/', { name: 'sora', type: 1, key: 'sk-sora', base_url: emulator.baseUrl, models: 'sora-2' });
      const token = await admin('/api/token/', { name: 'task kill', remain_quota: TOKEN_START });
      const tokenId = Number(token.id);
      await db.updateTable('users').set({ quota: USER_START }).where('id', '=', 1).execute();

      emulator.plan = { outcome: 'completed', polls: 0 };
      emulator.stallPolls = true;
      const created = await fetch(`${node!.baseUrl}/v1/videos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
        body: JSON.stringify({ model: 'sora-2', prompt: 'a lighthouse in a storm', seconds: '8' }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };

      // the node is asking the vendor, under its lease, when it is killed
      await waitFor(
        'the first poll',
        async () => {
          const task = await findTaskById(db, id);
          return task?.lease_owner !== null && emulator.requests.some((request) => request.startsWith('GET /v1/videos/video_up_'));
        },
        15_000,
      );
      await node!.stop('SIGKILL');
      const orphan = await findTaskById(db, id);
      expect(orphan).toMatchObject({ status: 'queued', held_quota: EIGHT_SECONDS });
      expect(Number(orphan!.lease_until)).toBeGreaterThan(Date.now());
      const held = await ledgerState(db, 1, tokenId);
      expect(held).toMatchObject({ userHeld: EIGHT_SECONDS, tokenHeld: EIGHT_SECONDS, logged: 0 });
      expect(held.quota).toBe(USER_START - EIGHT_SECONDS);

      // another node: nothing to take while the dead one's lease runs, then the video, settled once
      emulator.stallPolls = false;
      survivor = await buildTestApp({ tasks: { intervalMs: 0, pollEveryMs: 0, leaseMs: 60_000 } }, killable!.database.config);
      if (Date.now() < Number(orphan!.lease_until) - 200) expect(await survivor.taskPoller.runOnce()).toBe(0);
      await waitFor(
        'the survivor to settle the video',
        async () => {
          await survivor!.taskPoller.runOnce();
          return (await findTaskById(db, id))?.status === 'completed';
        },
        15_000,
      );
      await survivor.taskPoller.runOnce();

      const now = await ledgerState(db, 1, tokenId);
      expect(now).toMatchObject({ userHeld: 0, tokenHeld: 0, logged: EIGHT_SECONDS });
      expect(now.quota).toBe(USER_START - EIGHT_SECONDS);
      expect(now.remain).toBe(TOKEN_START - EIGHT_SECONDS);
      const logs = await db
        .selectFrom('logs')
        .select('other')
        .where('type', '=', LogType.consume)
        .where('token_id', '=', tokenId)
        .execute();
      expect(logs.map((log) => (JSON.parse(log.other!) as { taskId?: string }).taskId)).toEqual([id]);
    });
  });
}
