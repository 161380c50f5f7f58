// npm run audit:verify: walks the audit log's hash chain (chain.ts) on the
// database Switchboard is configured with (SQLITE_PATH or SQL_DSN, read as
// the gateway reads them) and exits 0 when it is intact, 1 naming the first
// bad row when it is not, 2 when the database could not be read.
import { databaseFromEnv, dataDirFromEnv } from '../config';
import { migrateToLatest, openDatabase } from '../db/database';
import { verifyAuditChain } from './chain';

async function main(): Promise<number> {
  const opened = await openDatabase(databaseFromEnv(process.env, dataDirFromEnv(process.env)));
  try {
    // a database from before the audit log gets its (empty) chain first
    await migrateToLatest(opened.db);
    const status = await verifyAuditChain(opened.db);
    if (status.broken_at) {
      const { seq, id, reason } = status.broken_at;
      console.error(`audit chain broken at row #${seq}${id === null ? '' : ` (id ${id})`}: ${reason}`);
      return 1;
    }
    const pruned = status.anchor_seq > 0 ? `, rows up to #${status.anchor_seq} pruned` : '';
    console.log(`audit chain intact: ${status.rows} rows, head #${status.head_seq}${pruned}`);
    return 0;
  } finally {
    await opened.checkpointer?.stop();
    await opened.db.destroy();
    opened.instanceLock?.release();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // a driver's message may quote the DSN: keep only its first line, without credentials
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0].replace(/\/\/[^@/\s]*@/g, '//***@');
    console.error(`audit verify failed: ${message}`);
    process.exit(2);
  },
);
