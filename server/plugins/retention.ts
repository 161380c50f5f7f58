// The kinds of stored rows the retention panel shows and the prune deletes
// (billing/retentionKinds.ts), one line each, in the panel's order; here
// because a kind may come from a folder billing/ may not import (audit/).
import type { FastifyInstance } from 'fastify';
import { pruneAudit } from '../audit/retention';
import { errorLogs, relayLogs, retentionKind, type RetentionKind } from '../billing/retentionKinds';
import type { RetentionDeps } from '../billing/retentionJob';

/** The audit log: pruned oldest first, the chain's anchor moving with it (audit/retention.ts). */
const auditRows = retentionKind({
  name: 'audit',
  optionKey: 'AuditRetentionDays',
  table: 'audit_log',
  prune: (db, cutoff, progress) => pruneAudit(db, cutoff, { signal: progress.signal, onDeleted: (count) => progress.removed(count) }),
});

export const RETENTION_KINDS: readonly RetentionKind[] = [relayLogs, errorLogs, auditRows];

/** What the prune and the panel's report work with: the app's services, its log and the kinds. */
export function retentionDepsOf(app: FastifyInstance): RetentionDeps {
  const { db, dialect, options, jobs } = app.ctx;
  return { db, dialect, options, jobs, log: app.log, kinds: RETENTION_KINDS };
}
