// npm run import -- <source> [--apply] [--merge] [--with-logs]
// The target is the database Switchboard is configured with (SQLITE_PATH or
// SQL_DSN, as for the gateway); it is migrated to the latest schema first.
import { databaseFromEnv, dataDirFromEnv } from '../config';
import { migrateToLatest, openDatabase } from '../db/database';
import { runImport } from './importer';
import { formatReport } from './report';
import { openSource, redactedLocation } from './source';

const USAGE = `usage: npm run import -- <source> [--apply] [--merge] [--with-logs]
  <source>     a one-api or new-api database: a SQLite file, mysql://user:pass@host:3306/db or postgres://user:pass@host/db
  --apply      import (without it: a dry run that writes nothing)
  --merge      add to a target that already holds users (ids kept apart, clashes reported)
  --with-logs  also move the logs, in batches, and build the dashboard's rollups from them`;

async function main(argv: string[]): Promise<number> {
  const flags = new Set(argv.filter((arg) => arg.startsWith('--')));
  const positional = argv.filter((arg) => !arg.startsWith('--'));
  const unknown = [...flags].filter((flag) => !['--apply', '--merge', '--with-logs', '--help'].includes(flag));
  if (flags.has('--help') || positional.length !== 1 || unknown.length) {
    console.error(unknown.length ? `unknown option ${unknown.join(', ')}\n${USAGE}` : USAGE);
    return flags.has('--help') ? 0 : 2;
  }
  // the gateway's own reading of SQLITE_PATH / SQL_DSN, without the rest of its configuration (which would create files)
  const source = await openSource(positional[0]);
  const opened = await openDatabase(databaseFromEnv(process.env, dataDirFromEnv(process.env)));
  try {
    await migrateToLatest(opened.db);
    let lastStep = '';
    const report = await runImport(source, opened, {
      apply: flags.has('--apply'),
      merge: flags.has('--merge'),
      withLogs: flags.has('--with-logs'),
      onProgress: ({ step, done, total }) => {
        // one line per step, rewritten in place as it moves (the logs' batches)
        if (step !== lastStep && lastStep) process.stderr.write('\n');
        process.stderr.write(`\r${step}: ${done}/${total}`);
        lastStep = step;
      },
    });
    process.stderr.write('\n');
    console.log(formatReport(report));
    return report.refused ? 1 : 0;
  } finally {
    await source.close();
    await opened.checkpointer?.stop();
    await opened.db.destroy();
    opened.instanceLock?.release();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // driver messages can quote a DSN; never its password
    const message = error instanceof Error ? error.message : String(error);
    console.error(`import failed: ${redactedLocation(message)}`);
    process.exit(1);
  },
);
