// npm run bench:import: the one-api import with its logs. Writes the one-api
// latest fixture with BENCH_IMPORT_LOGS extra consume logs (default 100,000)
// to a temp file, prints the dry run's report, then imports it with
// --with-logs into a fresh SQLite file and prints how long that took, and
// checks the rollups hold every consume log's quota.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { migrateToLatest, openDatabase } from '../server/db/database';
import { runImport } from '../server/import/importer';
import { formatReport } from '../server/import/report';
import { openSource } from '../server/import/source';
import { writeFixture } from '../tests/server/import/__fixtures__/build';

const extraLogs = Number(process.env.BENCH_IMPORT_LOGS ?? 100_000);
const folder = mkdtempSync(join(tmpdir(), 'switchboard-bench-import-'));
try {
  const sourcePath = join(folder, 'one-api.db');
  writeFixture('one-api-latest', sourcePath, extraLogs);
  const sourceRows = new SQLite(sourcePath, { readonly: true });
  const expectedQuota = sourceRows.prepare('select sum(quota) as quota, count(*) as count from logs where type = 2').get() as {
    quota: number;
    count: number;
  };
  sourceRows.close();

  const target = await openDatabase({ dialect: 'sqlite', path: join(folder, 'switchboard.db') });
  await migrateToLatest(target.db);
  const source = await openSource(sourcePath);
  const dryRun = await runImport(source, target, { withLogs: true });
  console.log(formatReport(dryRun));

  const started = process.hrtime.bigint();
  const report = await runImport(source, target, { apply: true, withLogs: true });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rollup = await target.db
    .selectFrom('usage_daily')
    .select((eb) => [eb.fn.sum<number>('quota').as('quota'), eb.fn.sum<number>('requests').as('requests')])
    .executeTakeFirstOrThrow();
  const logs = report.tables.find((table) => table.table === 'logs')!;
  console.log(
    `\nimported ${logs.carried} log rows (${expectedQuota.count} consume logs) with --with-logs into SQLite in ${seconds.toFixed(2)} s`,
  );
  console.log(
    `rollups: ${Number(rollup.requests)} requests, ${Number(rollup.quota)} quota (source consume logs: ${expectedQuota.quota} quota)`,
  );
  if (Number(rollup.quota) !== expectedQuota.quota || Number(rollup.requests) !== expectedQuota.count)
    throw new Error('the rollups do not add up to the consume logs');
  await source.close();
  await target.checkpointer?.stop();
  await target.db.destroy();
  target.instanceLock?.release();
} finally {
  rmSync(folder, { recursive: true, force: true });
}
