// Finding 2, the restart half: a PostgreSQL stop of 10 s killed a node, and a
// dead node stays dead. Here a private PostgreSQL and a private MariaDB (own
// temp dir, own port: the shared servers serve other suites) are stopped for
// a few seconds under relay load and started again. The gateway process stays
// up, answers a quick 503 while the database is away, serves again within
// seconds once it is back, and writes the settlements it kept queued: the
// ledger balances to the unit.
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';
import {
  apiCall,
  countBy,
  ledgerAfter,
  ledgerDiscrepancy,
  mariadbTools,
  openReader,
  postgresTools,
  prepareRelay,
  relayOnce,
  settledBalances,
  spawnGateway,
  unexpectedAnswers,
  startLoad,
  startPrivateMariadb,
  startPrivatePostgres,
  waitUntil,
  type PrivateServer,
} from './support';

const suite = 'faults: database restart';
const servers = [
  { name: 'postgres' as const, tools: postgresTools(suite), start: () => startPrivatePostgres(postgresTools(suite)!) },
  { name: 'mysql' as const, tools: mariadbTools(suite), start: () => startPrivateMariadb(mariadbTools(suite)!) },
];

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** How long the database stays away. */
const OUTAGE_MS = 5_000;

describe.each(servers)('database restarted under load ($name)', (server) => {
  it.runIf(server.tools !== undefined)('the node stays up, answers 503 quickly meanwhile, then serves and settles everything', async () => {
    const emulator: OpenAIEmulator = await startOpenAIEmulator({ record: false });
    cleanups.push(() => emulator.close());
    const database: PrivateServer = await server.start();
    cleanups.push(() => database.destroy());
    const admin = await openReader(server.name, database.url);
    await admin.query(server.name === 'postgres' ? 'create database switchboard' : 'create database switchboard character set utf8mb4');
    const url = new URL(database.url);
    url.pathname = '/switchboard';
    const gateway = await spawnGateway({ SQL_DSN: url.toString() });
    cleanups.push(() => gateway.stop());
    const { tokenKey, tokenId, cookie } = await prepareRelay(gateway.baseUrl, emulator.baseUrl);
    const reader = await openReader(server.name, url.toString());
    expect((await relayOnce(gateway.baseUrl, tokenKey, false)).status).toBe(200);
    const start = await settledBalances(reader.query, tokenId);

    const load = startLoad(gateway.baseUrl, tokenKey, 6);
    await waitUntil('the load under way', () => load.answers.filter((answer) => answer.status === 200).length >= 20);
    await database.stop();
    const stoppedAt = Date.now();
    await waitUntil('the database away', () => load.answers.some((answer) => answer.at > stoppedAt && answer.status === 503), 5_000);
    // the console says so in its envelope, quickly; what needs no database keeps working
    const console503 = await apiCall(gateway.baseUrl, 'GET', '/api/user/self', undefined, cookie);
    expect({ status: console503.status, body: console503.json }).toEqual({
      status: 503,
      body: { success: false, message: expect.stringContaining('database is unavailable') },
    });
    expect((await apiCall(gateway.baseUrl, 'GET', '/api/status')).json.success).toBe(true);
    await new Promise((wake) => setTimeout(wake, stoppedAt + OUTAGE_MS - Date.now()));
    expect(gateway.alive(), gateway.output()).toBe(true);
    // the outage ends when the start begins: the server may take requests before start() sees it up
    const restartingAt = Date.now();
    await database.start();
    const startedAt = Date.now();
    const recoveryMs = await waitUntil(
      'a relayed request answered after the restart',
      () => load.answers.some((answer) => answer.at > startedAt && answer.status === 200),
      15_000,
    );
    const answers = await load.stop();
    expect(gateway.alive(), gateway.output()).toBe(true);

    // while the database was away: 503 database_unavailable (relayOnce checks the code), quickly
    const during = answers.filter((answer) => answer.at > stoppedAt + 500 && answer.at + answer.ms < restartingAt);
    const duringCounts = countBy(during);
    expect(during.length, JSON.stringify(duringCounts)).toBeGreaterThan(10);
    expect(duringCounts, JSON.stringify(duringCounts)).toEqual({ 503: during.length });
    const slowest = Math.max(...during.map((answer) => answer.ms));
    expect(slowest).toBeLessThan(1_500);
    // nothing but successes and 503s at any time
    const counts = countBy(answers);
    expect(unexpectedAnswers(answers), JSON.stringify(counts)).toEqual([]);
    expect((await relayOnce(gateway.baseUrl, tokenKey, true)).status).toBe(200);

    const end = await ledgerAfter(reader.query, tokenId, start);
    const discrepancy = ledgerDiscrepancy(start, end);
    console.log(
      `[faults] ${server.name} restart: answers ${JSON.stringify(counts)}; during the outage ${during.length} answers, slowest ${slowest} ms; serving again ${recoveryMs} ms after the start; ledger ${JSON.stringify(discrepancy)}`,
    );
    expect({ user: discrepancy.user, token: discrepancy.token, member: discrepancy.member }).toEqual({ user: 0, token: 0, member: 0 });
    // every reservation is a row of its own: one whose COMMIT answer a kill cut off is undone by it, so nothing stays held
    expect({ userHeld: discrepancy.userHeld, tokenHeld: discrepancy.tokenHeld }).toEqual({ userHeld: 0, tokenHeld: 0 });
    expect(end.logs).toBeGreaterThan(start.logs);
  });
});
