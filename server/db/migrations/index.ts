// The migrations, in order. Each file is frozen once released; a change to the
// schema is a new file appended here.
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial';
import * as verificationCodes from './0002-verification-codes';
import * as heldQuota from './0003-held-quota';
import * as reservations from './0004-reservations';
import * as concurrencyLimits from './0005-concurrency-limits';
import * as sessions from './0006-sessions';
import * as exactIdentityColumns from './0007-exact-identity-columns';
import * as channelTestError from './0008-channel-test-error';
import * as usageRollups from './0009-usage-rollups';
import * as requestIds from './0010-request-ids';
import * as rateLimits from './0011-rate-limits';
import * as jobLeases from './0012-job-leases';
import * as twoFactor from './0013-two-factor';
import * as webhooks from './0014-webhooks';
import * as logDetails from './0015-log-details';
import * as latencySketches from './0016-latency-sketches';
import * as ledgerBatches from './0017-ledger-batches';
import * as channelKeys from './0018-channel-keys';
import * as budgets from './0019-budgets';
import * as channelTestModel from './0021-channel-test-model';
import * as auditLog from './0022-audit-log';
import * as oidcIdentities from './0023-oidc-identities';
import * as passkeys from './0024-passkeys';
import * as organizations from './0025-organizations';
import * as pruneRuns from './0026-prune-runs';
import * as memberCaps from './0027-member-caps';
import * as files from './0028-files';
import * as tasks from './0029-tasks';
import * as batchLines from './0030-batch-lines';
import * as responseCache from './0032-response-cache';

export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-verification-codes': verificationCodes,
  '0003-held-quota': heldQuota,
  '0004-reservations': reservations,
  '0005-concurrency-limits': concurrencyLimits,
  '0006-sessions': sessions,
  '0007-exact-identity-columns': exactIdentityColumns,
  '0008-channel-test-error': channelTestError,
  '0009-usage-rollups': usageRollups,
  '0010-request-ids': requestIds,
  '0011-rate-limits': rateLimits,
  '0012-job-leases': jobLeases,
  '0013-two-factor': twoFactor,
  '0014-webhooks': webhooks,
  '0015-log-details': logDetails,
  '0016-latency-sketches': latencySketches,
  '0017-ledger-batches': ledgerBatches,
  '0018-channel-keys': channelKeys,
  '0019-budgets': budgets,
  '0021-channel-test-model': channelTestModel,
  '0022-audit-log': auditLog,
  '0023-oidc-identities': oidcIdentities,
  '0024-passkeys': passkeys,
  '0025-organizations': organizations,
  '0026-prune-runs': pruneRuns,
  '0027-member-caps': memberCaps,
  '0028-files': files,
  '0029-tasks': tasks,
  '0030-batch-lines': batchLines,
  '0032-response-cache': responseCache,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
