// npm run bench:ratelimit: how closely the relay's rate limit holds across
// nodes. Two gateway processes on one PostgreSQL database and one Redis, a
// key limited to RATE_RPM requests a minute (default 600), RATE_OFFERED
// requests a second offered (default 200) for RATE_SECONDS (default 8),
// alternating between the nodes. Prints admitted against what the limit
// allows over the time the nodes were admitting, and the error in percent
// (the test of the same run asserts it is within 5%).
import { databaseTargets } from '../tests/support/databases';
import { describeRun, runTwoNodeRateLimit } from '../tests/support/rateLimitLoad';

const rpm = Number(process.env.RATE_RPM ?? 600);
const offeredPerSecond = Number(process.env.RATE_OFFERED ?? 200);
const seconds = Number(process.env.RATE_SECONDS ?? 8);

const postgres = (await databaseTargets('rate limit accuracy bench')).find((target) => target.name === 'postgres');
if (!postgres?.available) {
  console.error('PostgreSQL is not reachable (TEST_POSTGRES_URL): the accuracy run needs it for its two nodes');
  process.exit(1);
}
const database = await postgres.create();
try {
  const run = await runTwoNodeRateLimit(database, { rpm, offeredPerSecond, seconds });
  console.log(describeRun(run));
  console.log(
    `| rate limit accuracy (2 nodes, rpm ${rpm}, ${offeredPerSecond}/s offered) | admitted ${run.admitted} | expected ${run.expected.toFixed(1)} | error ${run.errorPercent.toFixed(2)}% |`,
  );
} finally {
  await database.drop();
}
