// Proof that rate limits hold across nodes: two real gateway
// processes share one PostgreSQL database and one Redis; a key limited to
// 600 requests a minute is offered about 200 requests a second, alternating
// between the nodes, for several seconds. Over the run the limit admits a
// full bucket (600) plus 10 a second for the time the load actually lasted;
// what was admitted must be within 5% of that, from both nodes together (two
// nodes counting apart would admit about twice as much), every other answer
// a well-formed 429, and nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, redisAvailable, type TestDatabase } from '../../support/databases';
import { describeRun, runTwoNodeRateLimit } from '../../support/rateLimitLoad';

const postgres = (await databaseTargets('two-node rate limits')).find((target) => target.name === 'postgres');
const redisUp = await redisAvailable('two-node rate limits');

describe.runIf(postgres?.available && redisUp)('rate limits across two nodes sharing PostgreSQL and Redis', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await postgres!.create();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('admits within 5% of what 600 rpm allows while 200 requests a second are offered', async () => {
    // Redis's command timeout at 2 s, not the default 0.2 s: on an overloaded machine (load 7x the cores) a node's
    // event loop stalls past 0.2 s, the node counts alone for those requests by design (a request never fails because
    // Redis is slow; rateLimits.test.ts tests that fallback) and admits more than the shared limit (10.6% over, seen
    // once). This test is about two nodes sharing one limit, so it keeps them on Redis.
    const run = await runTwoNodeRateLimit(database, { rpm: 600, offeredPerSecond: 200, seconds: 8, redisTimeoutMs: 2000 });
    console.log(describeRun(run));
    expect(run.others, describeRun(run)).toEqual({});
    expect(run.admitted + run.refused).toBe(run.sent);
    // the load went well past the limit (else the run proves nothing): far more offered than admitted
    expect(run.refused, describeRun(run)).toBeGreaterThan(run.admitted / 2);
    expect(Math.abs(run.errorPercent), describeRun(run)).toBeLessThanOrEqual(5);
    // both nodes admitted their share of the one limit
    expect(Math.min(...run.admittedByNode), describeRun(run)).toBeGreaterThan(run.admitted / 4);
    expect(run.refusalsWellFormed).toBe(true);
  }, 180_000);
});
