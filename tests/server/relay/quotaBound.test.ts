// A request without max_tokens used to reserve only
// PreConsumedQuota x ratio, and its settlement floored the balance at zero, so
// ten concurrent requests against 3,750 got several times that in service.
// Now a reservation covers the model's maximum output; a balance that cannot
// pay for it gets the request's max_tokens lowered to what it can pay; and a
// provider that overruns the limit anyway is charged in full, the balance
// going below zero by exactly that excess and refusing further calls.
// Checked from the database on every target: what was charged never exceeds
// what was held beyond the overrun, the logs equal the charges, nothing stays held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('quota bound');
const START = 3_750;

for (const target of targets) {
  describe.runIf(target.available)(`reservations bound what a request costs on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-upstream' });
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const db = () => harness.app.ctx.db;
    const balances = async () => {
      await harness.settled();
      const user = await db()
        .selectFrom('users')
        .select(['quota', 'held_quota', 'used_quota'])
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      const token = await db()
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', harness.tokenId)
        .executeTakeFirstOrThrow();
      const logged = await db()
        .selectFrom('logs')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
        .where('type', '=', LogType.consume)
        .executeTakeFirstOrThrow();
      return {
        quota: Number(user.quota),
        userHeld: Number(user.held_quota),
        userUsed: Number(user.used_quota),
        remain: Number(token.remain_quota),
        tokenHeld: Number(token.held_quota),
        tokenUsed: Number(token.used_quota),
        logged: Number(logged.sum),
      };
    };

    /** Ten requests at once without max_tokens, each answered with `chunks` completion tokens. */
    const burst = (chunks: number, respectLimit: boolean) =>
      Promise.all(
        Array.from({ length: 10 }, () =>
          harness
            .post('/v1/chat/completions', {
              model: 'gpt-3.5-turbo',
              messages: [{ role: 'user', content: 'tell me everything' }],
              emulator: { chunks, delay_ms: 0, respect_max_tokens: respectLimit },
            })
            .then(async (response) => ({
              status: response.status,
              retryAfter: response.headers.get('retry-after'),
              body: await response.text(),
            })),
        ),
      );

    const scenarios = [
      {
        name: 'a user',
        limit: async (quota: number) => {
          await db().updateTable('users').set({ quota }).where('id', '=', 1).execute();
          await db().updateTable('tokens').set({ remain_quota: 100_000_000 }).where('id', '=', harness.tokenId).execute();
        },
      },
      {
        name: 'a limited token',
        limit: async (quota: number) => {
          await db().updateTable('users').set({ quota: 100_000_000 }).where('id', '=', 1).execute();
          await db().updateTable('tokens').set({ remain_quota: quota }).where('id', '=', harness.tokenId).execute();
        },
      },
    ];

    for (const scenario of scenarios) {
      it(`${scenario.name} holding ${START}: ten long answers at once cost at most ${START}, and the logs say so`, async () => {
        await scenario.limit(START);
        const before = await balances();
        const sentBefore = harness.emulator.requests.length;
        const answers = await burst(600, true);
        expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThan(0);
        for (const answer of answers.filter((answer) => answer.status !== 200)) {
          expect(answer.status).toBe(429);
          expect(answer.body).toContain('insufficient_quota');
        }
        const after = await balances();
        const charged = after.logged - before.logged;
        const balance = scenario.name === 'a user' ? after.quota : after.remain;
        expect(charged).toBeLessThanOrEqual(START);
        expect(balance).toBe(START - charged);
        expect(balance).toBeGreaterThanOrEqual(0);
        expect(after.userUsed - before.userUsed).toBe(charged);
        expect(after.tokenUsed - before.tokenUsed).toBe(charged);
        expect([after.userHeld, after.tokenHeld]).toEqual([0, 0]);
        // a lowered limit went upstream as max_tokens (the first to reserve may have had the model's whole output,
        // and the requests reach the upstream in any order)
        const forwarded = harness.emulator.requests
          .slice(sentBefore)
          .map((request) => (request.body as { max_tokens?: number }).max_tokens);
        expect(forwarded.some((limit) => typeof limit === 'number' && limit > 0)).toBe(true);
      });

      it(`${scenario.name}: a provider that ignores the limit is charged in full, the balance owes the excess and further calls are refused`, async () => {
        await scenario.limit(START);
        const before = await balances();
        // 6,000 tokens, far beyond the 3,750 the balance could pay for
        const answers = await burst(6000, false);
        const served = answers.filter((answer) => answer.status === 200).length;
        expect(served).toBeGreaterThan(0);
        const after = await balances();
        const charged = after.logged - before.logged;
        const balance = scenario.name === 'a user' ? after.quota : after.remain;
        // no floor at zero: every charge is on the balance, and logged
        expect(balance).toBe(START - charged);
        expect(balance).toBeLessThan(0);
        // charged in full: each served answer's log bills all 6,000 tokens the provider reported
        const logs = await db()
          .selectFrom('logs')
          .select(['quota', 'prompt_tokens', 'completion_tokens'])
          .where('type', '=', LogType.consume)
          .orderBy('id', 'desc')
          .limit(served)
          .execute();
        for (const log of logs) {
          expect(Number(log.completion_tokens)).toBe(6000);
          // gpt-3.5-turbo at the catalog's price: ratio 0.25, output at 3x
          expect(Number(log.quota)).toBe(Math.floor((Number(log.prompt_tokens) + 18000) * 0.25));
        }
        expect(logs.reduce((sum, log) => sum + Number(log.quota), 0)).toBe(charged);
        expect([after.userHeld, after.tokenHeld]).toEqual([0, 0]);
        const refused = await harness.post('/v1/chat/completions', {
          model: 'gpt-3.5-turbo',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'once more' }],
        });
        expect(refused.status).toBe(429);
        expect((await balances()).logged).toBe(after.logged);
      });
    }
  });
}
