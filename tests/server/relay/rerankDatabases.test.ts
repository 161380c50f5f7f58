// Rerank's money on every database the gateway runs on (SQLite always,
// PostgreSQL and MySQL/MariaDB when their local servers answer): a Cohere
// rerank settled to the search units Cohere billed and a Voyage rerank
// settled to the tokens Voyage counted, each exactly, with nothing left held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { computeQuota, searchUnitQuota } from '../../../server/billing/prices';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { RERANK_GOOD_KEY, startRerankEmulator, type RerankEmulator } from '../../support/emulators/rerank';
import { expectBilled, resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('rerank billing', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`rerank billed on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let cohere: RerankEmulator;
    let voyage: RerankEmulator;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await resetRelay(harness);
      cohere = await startRerankEmulator('cohere');
      voyage = await startRerankEmulator('voyage');
    });
    afterAll(async () => {
      await harness?.close();
      await cohere?.close();
      await voyage?.close();
      await database?.drop();
    });

    const heldQuota = async () =>
      Number(
        (await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow())
          .held_quota,
      );

    it('Cohere: 250 documents, three search units at floor(1 x 1000) each', async () => {
      const channelId = await harness.addChannel({
        name: 'cohere',
        type: 35,
        key: RERANK_GOOD_KEY,
        base_url: cohere.baseUrl,
        models: 'rerank-v3.5',
      });
      const before = await harness.balances();
      const documents = Array.from({ length: 250 }, (_, index) => `note ${index} on skin care`);
      const response = await harness.post('/v1/rerank', { model: 'rerank-v3.5', query: 'skin care', documents, top_n: 5 });
      expect(response.status).toBe(200);
      expect(cohere.searchUnits.at(-1)).toBe(3);
      await expectBilled(harness, before, channelId, 'rerank-v3.5', searchUnitQuota(1, 3), { prompt_tokens: 0 });
      expect(await heldQuota()).toBe(0);
    });

    it('Voyage: the tokens Voyage counted at the model ratio', async () => {
      await resetRelay(harness);
      const channelId = await harness.addChannel({
        name: 'voyage',
        type: 53,
        key: RERANK_GOOD_KEY,
        base_url: voyage.baseUrl,
        models: 'rerank-2.5',
      });
      const before = await harness.balances();
      const response = await harness.post('/v1/rerank', {
        model: 'rerank-2.5',
        query: 'skin care tips',
        documents: ['care for dry skin', 'car repair'],
      });
      expect(response.status).toBe(200);
      const tokens = voyage.reported.at(-1)!.promptTokens;
      expect(tokens).toBe(3 * 2 + 4 + 2);
      await expectBilled(
        harness,
        before,
        channelId,
        'rerank-2.5',
        computeQuota({ promptTokens: tokens, completionTokens: 0, ratio: DEFAULT_MODEL_RATIO['rerank-2.5'], completionRatio: 1 }),
        {
          prompt_tokens: tokens,
        },
      );
      expect(await heldQuota()).toBe(0);
    });
  });
}
