// What the tests that kill a gateway process mid-task share: the process on a
// fresh database of its own (and a console folder), the test's own connection
// to that database to read what the dead node left, and a wait for a condition.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase, type Database } from '../../../server/db/database';
import { spawnGatewayProcess, type GatewayProcess } from '../../support/gatewayProcess';
import type { DatabaseTarget, TestDatabase } from '../../support/databases';

export interface KillableNode {
  database: TestDatabase;
  /** The test's own connection to the node's database. */
  db: Kysely<Database>;
  node: GatewayProcess;
  /** Kills the node if it still runs, then drops the connection, the database and the console folder. */
  close(): Promise<void>;
}

/** A gateway process with `env` (root's password among it) on a new database of `target`. */
export async function startKillableNode(target: DatabaseTarget, name: string, env: Record<string, string>): Promise<KillableNode> {
  const database = await target.create();
  const consoleDir = mkdtempSync(join(tmpdir(), `switchboard-${name}-`));
  const node = await spawnGatewayProcess(
    {
      SQL_DSN: database.config.dialect === 'sqlite' ? '' : database.config.connectionString,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      CONSOLE_DIR: consoleDir,
      ...env,
    },
    45_000,
  );
  const { db } = await openDatabase(database.config);
  return {
    database,
    db,
    node,
    async close() {
      await node.stop('SIGKILL');
      await db.destroy();
      await database.drop();
      rmSync(consoleDir, { recursive: true, force: true });
    },
  };
}

/** Until `check` holds, asked every 50 ms; fails naming `what` after `ms`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}
