// Finding 2: the database server dropping the gateway's connections under load
// (pg_terminate_backend on PostgreSQL, KILL on MariaDB) killed the process; an
// 'error' on a checked-out client had no listener. A real gateway process
// relays while the test kills every connection it has, again and again: the
// process stays up, the requests that lost their connection get a quick 503,
// it serves again within seconds, and the ledger balances to the unit.
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import {
  balances,
  countBy,
  ledgerAfter,
  ledgerDiscrepancy,
  openReader,
  prepareRelay,
  relayOnce,
  settledBalances,
  spawnGateway,
  unexpectedAnswers,
  startLoad,
  waitUntil,
  type GatewayProcess,
} from './support';

const targets = (await databaseTargets('faults: connection kills')).filter((target) => target.name !== 'sqlite');

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** The statement that drops every connection of the gateway's database but the caller's own. */
const killers = {
  postgres: async (query: (sql: string) => Promise<Array<Record<string, unknown>>>, database: string) =>
    (
      await query(
        `select pg_terminate_backend(pid) as killed from pg_stat_activity where datname = '${database}' and pid <> pg_backend_pid()`,
      )
    ).length,
  mysql: async (query: (sql: string) => Promise<Array<Record<string, unknown>>>, database: string) => {
    const rows = await query(`select id from information_schema.processlist where db = '${database}' and id <> connection_id()`);
    for (const row of rows) await query(`kill ${Number(row.id)}`).catch(() => undefined); // it may have gone already
    return rows.length;
  },
};

describe.each(targets)('gateway connections killed under load ($name)', (target) => {
  it.runIf(target.available)(
    'stays up, answers 503 meanwhile, serves again and balances',
    async () => {
      const emulator: OpenAIEmulator = await startOpenAIEmulator({ record: false });
      cleanups.push(() => emulator.close());
      const database: TestDatabase = await target.create();
      cleanups.push(() => database.drop());
      const url = (database.config as { connectionString: string }).connectionString;
      const databaseName = new URL(url).pathname.slice(1);
      const gateway: GatewayProcess = await spawnGateway({ SQL_DSN: url });
      cleanups.push(() => gateway.stop());
      const { tokenKey, tokenId } = await prepareRelay(gateway.baseUrl, emulator.baseUrl);
      const reader = await openReader(target.name as 'postgres' | 'mysql', url);
      cleanups.push(() => reader.close());
      const killer = await openReader(target.name as 'postgres' | 'mysql', url);
      cleanups.push(() => killer.close());

      expect((await relayOnce(gateway.baseUrl, tokenKey, false)).status).toBe(200);
      const start = await settledBalances(reader.query, tokenId);

      const load = startLoad(gateway.baseUrl, tokenKey, 8);
      await waitUntil('the load under way', () => load.answers.filter((answer) => answer.status === 200).length >= 20);
      let killed = 0;
      const killUntil = Date.now() + 6_000;
      while (Date.now() < killUntil) {
        killed += await killers[target.name as 'postgres' | 'mysql'](killer.query, databaseName);
        expect(gateway.alive(), gateway.output()).toBe(true);
        await new Promise((wake) => setTimeout(wake, 150));
      }
      const killsEnded = Date.now();
      // the node serves again by itself: the first success after the last kill
      await waitUntil(
        'a relayed request answered after the kills',
        () => load.answers.some((answer) => answer.at > killsEnded && answer.status === 200),
        10_000,
      );
      const answers = await load.stop();

      expect(gateway.alive(), gateway.output()).toBe(true);
      expect(killed).toBeGreaterThan(10);
      const counts = countBy(answers);
      // every request either went through or was told the database was away; nothing else
      expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(expect.arrayContaining(['200']));
      expect(unexpectedAnswers(answers), JSON.stringify(counts)).toEqual([]);
      const refused = answers.filter((answer) => answer.status === 503);
      expect(Math.max(0, ...refused.map((answer) => answer.ms))).toBeLessThan(3_000);
      expect((await relayOnce(gateway.baseUrl, tokenKey, true)).status).toBe(200);

      const end = await ledgerAfter(reader.query, tokenId, start);
      expect(end.logs).toBeGreaterThan(start.logs);
      const discrepancy = ledgerDiscrepancy(start, end);
      console.log(
        `[faults] ${target.name}: ${killed} connections killed; answers ${JSON.stringify(counts)}; slowest 503 ${Math.max(0, ...refused.map((answer) => answer.ms))} ms; ledger ${JSON.stringify(discrepancy)}`,
      );
      // nothing lost, nothing invented, nothing charged twice
      expect({ user: discrepancy.user, token: discrepancy.token, member: discrepancy.member }).toEqual({ user: 0, token: 0, member: 0 });
      // every reservation is a row of its own: one whose COMMIT answer a kill cut off is undone by it, so nothing stays held
      expect({ userHeld: discrepancy.userHeld, tokenHeld: discrepancy.tokenHeld }).toEqual({ userHeld: 0, tokenHeld: 0 });
      // nothing was written to the database after it went quiet
      expect(await balances(reader.query, tokenId)).toEqual(end);
    },
    90_000,
  );
});
