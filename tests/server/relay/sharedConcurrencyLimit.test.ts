// Proof that the limits on requests in flight hold for the whole gateway, not
// per process: a key limited to N concurrent requests is offered more slow
// streams at once than that, spread over two processes, and exactly N are
// admitted (the refusals report N in flight, the count every process shares)
// while the rest answer 429 at once; once those N end, N are admitted again.
// Twice: WORKERS=2 on PostgreSQL without Redis (the primary process counts
// over IPC; a worker killed holding places gives them back), and two gateway
// processes on one PostgreSQL database and one Redis (the count is in Redis).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, REDIS_URL, redisAvailable, type TestDatabase } from '../../support/databases';
import { rootConsole, spawnGatewayProcess, type GatewayProcess } from '../../support/gatewayProcess';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

const ROOT_PASSWORD = 'shared-concurrency-root-password';
const LIMIT = 3;
const OFFERED = 10;
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

const postgres = (await databaseTargets('shared concurrency limits')).find((target) => target.name === 'postgres');
const redisUp = await redisAvailable('shared concurrency limits across nodes');

interface Answer {
  status: number;
  node: string;
  code?: string;
  message?: string;
  /** For an admitted stream: resolves once it has been read to its end. */
  finished?: Promise<void>;
}

/** A gateway set up for the run: an emulator channel, and a key limited to LIMIT requests in flight. */
async function prepare(baseUrl: string, emulator: OpenAIEmulator): Promise<string> {
  const admin = await rootConsole(baseUrl, ROOT_PASSWORD);
  await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
  const token = await admin('/api/token/', { name: 'limited', unlimited_quota: true, concurrency_limit: LIMIT });
  return `sk-${token.key}`;
}

/**
 * One stream the emulator holds open after its first chunk until the test lets it go (releaseHeld), so every other
 * request of its round is answered while it is admitted, however slowly a loaded machine delivers them; answered as
 * soon as its head comes.
 */
async function slowStream(baseUrl: string, key: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: 'gpt-3.5-turbo',
      stream: true,
      max_tokens: 20,
      emulator: { chunks: 3, hold: true },
      messages: [{ role: 'user', content: 'slowly' }],
    }),
  });
  const node = response.headers.get('x-switchboard-node') ?? '';
  if (response.status !== 200) {
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    return { status: response.status, node, code: error.code, message: error.message };
  }
  return {
    status: 200,
    node,
    finished: response.text().then((text) => {
      expect(text).toContain('data: [DONE]');
    }),
  };
}

/** OFFERED slow streams at once, the i-th to bases[i % bases.length]. */
async function round(
  bases: string[],
  key: string,
): Promise<{ admitted: Answer[]; refused: Answer[]; others: Answer[]; nodes: Set<string> }> {
  const answers = await Promise.all(Array.from({ length: OFFERED }, (_, index) => slowStream(bases[index % bases.length], key)));
  return {
    admitted: answers.filter((answer) => answer.status === 200),
    refused: answers.filter((answer) => answer.status === 429),
    others: answers.filter((answer) => answer.status !== 200 && answer.status !== 429),
    nodes: new Set(answers.map((answer) => answer.node)),
  };
}

function expectExactlyTheLimit(result: Awaited<ReturnType<typeof round>>) {
  const summary = JSON.stringify({
    admitted: result.admitted.map((a) => a.node),
    refused: result.refused.map((a) => [a.node, a.message]),
    others: result.others,
  });
  expect(result.others, summary).toEqual([]);
  expect(result.admitted, summary).toHaveLength(LIMIT);
  expect(result.refused, summary).toHaveLength(OFFERED - LIMIT);
  for (const refusal of result.refused) {
    expect(refusal.code).toBe('too_many_concurrent_requests');
    // the count every process shares, not one process's own
    expect(refusal.message).toBe(`this API key already has ${LIMIT} requests in flight, its limit; retry when one ends`);
  }
}

/** Lets the held streams go, waits until every stream of `answers` has ended, then a moment for the processes to give the places back. */
async function drain(emulator: OpenAIEmulator, answers: Answer[]) {
  emulator.releaseHeld();
  await Promise.all(answers.map((answer) => answer.finished ?? Promise.resolve()));
  await sleep(500);
}

/** What both setups start with: a fresh PostgreSQL database, an upstream, and the environment every gateway process of the run shares. */
async function startRun(): Promise<{
  database: TestDatabase;
  emulator: OpenAIEmulator;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}> {
  const database = await postgres!.create();
  if (database.config.dialect !== 'postgres') throw new Error('a PostgreSQL database was expected');
  const emulator = await startOpenAIEmulator();
  const consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-shared-concurrency-'));
  const env = {
    SQL_DSN: database.config.connectionString,
    NODE_ID_HEADER: '1',
    SESSION_SECRET: randomBytes(32).toString('hex'),
    CONSOLE_DIR: consoleDir,
    INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
  };
  return {
    database,
    emulator,
    env,
    async cleanup() {
      await emulator.close();
      await database.drop();
      rmSync(consoleDir, { recursive: true, force: true });
    },
  };
}

describe.runIf(postgres?.available)('requests in flight per key across WORKERS=2, without Redis', () => {
  let run: Awaited<ReturnType<typeof startRun>> | undefined;
  let gateway: GatewayProcess;
  let key = '';

  beforeAll(async () => {
    run = await startRun();
    gateway = await spawnGatewayProcess({ ...run.env, WORKERS: '2' }, 90_000);
    key = await prepare(gateway.baseUrl, run.emulator);
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop('SIGTERM');
    // the workers follow their primary out; any left are ended by their pids
    for (const match of (gateway?.output() ?? '').matchAll(/worker (\d+) is node/g)) {
      try {
        process.kill(Number(match[1]), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await run?.cleanup();
  });

  it('admits exactly the limit from both workers together, and the limit again once those end', async () => {
    const first = await round([gateway.baseUrl], key);
    expectExactlyTheLimit(first);
    // the requests were spread over both workers: each counted on its own would have admitted more
    expect(first.nodes.size, JSON.stringify([...first.nodes])).toBe(2);
    await drain(run!.emulator, first.admitted);
    const second = await round([gateway.baseUrl], key);
    expectExactlyTheLimit(second);
    await drain(run!.emulator, second.admitted);
  });

  it('gives back the places of a worker killed while holding them', async () => {
    const held = await round([gateway.baseUrl], key);
    expectExactlyTheLimit(held);
    const pids = new Map([...gateway.output().matchAll(/worker (\d+) is node ([0-9a-f]+)/g)].map((match) => [match[2], Number(match[1])]));
    // the worker that admitted the most of them dies at once, its streams cut
    const byNode = new Map<string, number>();
    for (const answer of held.admitted) byNode.set(answer.node, (byNode.get(answer.node) ?? 0) + 1);
    const [victimNode, victimHeld] = [...byNode.entries()].sort((a, b) => b[1] - a[1])[0];
    process.kill(pids.get(victimNode)!, 'SIGKILL');
    run!.emulator.releaseHeld();
    await Promise.all(held.admitted.map((answer) => (answer.finished ?? Promise.resolve()).catch(() => undefined)));
    await sleep(500);
    // the survivor's streams have ended too: all LIMIT places are free, none left to the dead worker
    const after = await round([gateway.baseUrl], key);
    expect(victimHeld).toBeGreaterThan(0);
    expectExactlyTheLimit(after);
    await drain(run!.emulator, after.admitted);
  });
});

describe.runIf(postgres?.available && redisUp)('requests in flight per key across two nodes sharing PostgreSQL and Redis', () => {
  let run: Awaited<ReturnType<typeof startRun>> | undefined;
  const nodes: GatewayProcess[] = [];
  let key = '';

  beforeAll(async () => {
    run = await startRun();
    // this run's counts only, whatever else shares the Redis
    const env = { ...run.env, REDIS_CONN_STRING: REDIS_URL, REDIS_KEY_PREFIX: `shared-concurrency:${randomBytes(6).toString('hex')}:` };
    // one after the other: both would otherwise race to create the schema
    nodes.push(await spawnGatewayProcess(env, 60_000));
    nodes.push(await spawnGatewayProcess(env, 60_000));
    key = await prepare(nodes[0].baseUrl, run.emulator);
  }, 150_000);
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
    await run?.cleanup();
  });

  it('admits exactly the limit from both nodes together, and the limit again once those end', async () => {
    const bases = nodes.map((node) => node.baseUrl);
    const first = await round(bases, key);
    expectExactlyTheLimit(first);
    expect(first.nodes.size, JSON.stringify([...first.nodes])).toBe(2);
    await drain(run!.emulator, first.admitted);
    const second = await round(bases, key);
    expectExactlyTheLimit(second);
    expect(second.nodes.size).toBe(2);
    await drain(run!.emulator, second.admitted);
  });
});
