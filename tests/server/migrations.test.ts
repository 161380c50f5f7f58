// The same migrations must build the same schema on SQLite, PostgreSQL and MySQL.
import { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, insertReturningId, type Database } from '../../server/db/database';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('migrations');

/** The seven usage rollup tables: a period, their key, the same counters; the channels' a latency sketch too. */
function rollupTables(): Record<string, string[]> {
  const counters = [
    'requests',
    'errors',
    'prompt_tokens',
    'completion_tokens',
    'quota',
    'latency_ms_sum',
    'latency_le_100',
    'latency_le_250',
    'latency_le_500',
    'latency_le_1000',
    'latency_le_2500',
    'latency_le_5000',
    'latency_le_10000',
    'latency_le_30000',
    'latency_le_60000',
    'latency_over',
  ];
  const keys: Record<string, string[]> = {
    '': ['user_id', 'token_id', 'model', 'channel_id'],
    _channels: ['model', 'channel_id'],
    _tokens: ['user_id', 'token_id'],
    _users: ['user_id'],
  };
  const tables: Record<string, string[]> = {};
  for (const period of ['hourly', 'daily'])
    for (const [suffix, key] of Object.entries(keys))
      if (period === 'daily' || suffix !== '_users')
        tables[`usage_${period}${suffix}`] = ['period', ...key, ...counters, ...(suffix === '_channels' ? ['latency_sketch'] : [])];
  return tables;
}

const EXPECTED_COLUMNS: Record<string, string[]> = {
  users: [
    'id',
    'username',
    'password_hash',
    'display_name',
    'role',
    'status',
    'email',
    'github_id',
    'wechat_id',
    'access_token_hash',
    'quota',
    'used_quota',
    'request_count',
    'group',
    'aff_code',
    'inviter_id',
    'session_version',
    'created_at',
    'held_quota',
    'concurrency_limit',
    'rpm_limit',
    'tpm_limit',
    'budget_period',
    'budget_quota',
    'period_spent',
    'period_start',
    'organization_id',
  ],
  tokens: [
    'id',
    'user_id',
    'key',
    'status',
    'name',
    'created_time',
    'accessed_time',
    'expired_time',
    'remain_quota',
    'unlimited_quota',
    'used_quota',
    'models',
    'allowed_ips',
    'held_quota',
    'concurrency_limit',
    'rpm_limit',
    'tpm_limit',
    'budget_period',
    'budget_quota',
    'period_spent',
    'period_start',
    'member_user_id',
  ],
  channels: [
    'id',
    'type',
    'key',
    'status',
    'name',
    'weight',
    'priority',
    'auto_disabled',
    'created_time',
    'test_time',
    'response_time',
    'base_url',
    'other',
    'balance',
    'balance_updated_time',
    'models',
    'group',
    'used_quota',
    'model_mapping',
    'test_error',
    'multi_key',
    'key_strategy',
    'test_model',
  ],
  channel_keys: ['id', 'channel_id', 'key', 'status', 'last_error', 'last_used_at', 'used_count', 'failed_count', 'created_time'],
  abilities: ['group', 'model', 'channel_id', 'enabled', 'priority', 'weight'],
  redemptions: ['id', 'user_id', 'key', 'status', 'name', 'quota', 'created_time', 'redeemed_time', 'redeemed_by'],
  logs: [
    'id',
    'user_id',
    'created_at',
    'type',
    'content',
    'username',
    'token_name',
    'token_id',
    'model_name',
    'channel_id',
    'quota',
    'prompt_tokens',
    'completion_tokens',
    'elapsed_ms',
    'is_stream',
    'estimated',
    'request_id',
    'other',
  ],
  options: ['key', 'value'],
  verification_codes: ['id', 'purpose', 'target', 'code_hash', 'attempts', 'expires_at', 'created_at'],
  sessions: ['id_hash', 'user_id', 'created_at', 'expires_at', 'revoked', 'partial'],
  two_factor: ['user_id', 'secret_sealed', 'enabled', 'last_step', 'created_at', 'enabled_at'],
  two_factor_recovery_codes: ['id', 'user_id', 'code_hash', 'used_at'],
  oidc_identities: ['issuer', 'subject', 'user_id', 'created_at'],
  passkeys: [
    'id',
    'user_id',
    'credential_hash',
    'credential_id',
    'user_handle',
    'public_key',
    'counter',
    'transports',
    'name',
    'backed_up',
    'created_at',
    'last_used_at',
  ],
  passkey_challenges: ['challenge_hash', 'purpose', 'user_id', 'user_handle', 'expires_at'],
  reservations: ['id', 'node_id', 'user_id', 'token_id', 'limited', 'amount', 'state', 'created_at'],
  relay_nodes: ['id', 'lease_expires_at', 'started_at'],
  ledger_batches: ['id', 'created_at'],
  job_leases: ['name', 'holder', 'expires_at', 'detail'],
  prune_runs: ['kind', 'started_at', 'finished_at', 'removed', 'cutoff', 'manual'],
  audit_log: [
    'id',
    'seq',
    'created_at',
    'organization_id',
    'user_id',
    'username',
    'role',
    'ip',
    'user_agent',
    'request_id',
    'method',
    'route',
    'action',
    'target_type',
    'target_id',
    'status',
    'success',
    'changes',
    'prev_hash',
    'hash',
  ],
  audit_chain: ['id', 'head_seq', 'head_hash', 'anchor_seq', 'anchor_hash'],
  webhooks: ['id', 'name', 'url', 'secret', 'events', 'enabled', 'created_time'],
  organizations: ['id', 'name', 'status', 'created_time'],
  files: ['seq', 'id', 'user_id', 'filename', 'purpose', 'bytes', 'status', 'created_at', 'expires_at'],
  file_chunks: ['file_id', 'seq', 'data'],
  organization_members: [
    'organization_id',
    'user_id',
    'role',
    'created_time',
    'cap_quota',
    'spent_quota',
    'cap_period',
    'cap_period_quota',
    'period_spent',
    'period_start',
  ],
  webhook_deliveries: [
    'id',
    'webhook_id',
    'event_id',
    'event_type',
    'payload',
    'status',
    'attempts',
    'next_attempt_at',
    'last_status_code',
    'last_error',
    'claimed_by',
    'claim_expires_at',
    'created_time',
    'delivered_time',
  ],
  tasks: [
    'seq',
    'id',
    'kind',
    'user_id',
    'token_id',
    'limited',
    'channel_id',
    'key_id',
    'model',
    'upstream_id',
    'status',
    'progress',
    'held_quota',
    'charged_quota',
    'request',
    'error',
    'request_id',
    'lease_owner',
    'lease_until',
    'next_poll_at',
    'polls',
    'created_at',
    'updated_at',
    'completed_at',
    'expires_at',
  ],
  batch_lines: [
    'task_id',
    'line',
    'custom_id',
    'body',
    'bound',
    'status',
    'lease_owner',
    'lease_until',
    'attempts',
    'charged_quota',
    'status_code',
    'result',
    'updated_at',
  ],
  response_cache: ['cache_key', 'entry', 'size', 'created_at', 'expires_at'],
  ...rollupTables(),
};

for (const target of targets) {
  describe.runIf(target.available)(`migrations on ${target.name}`, () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let dialect: TestDatabase['config']['dialect'];

    beforeAll(async () => {
      database = await target.create();
      const opened = await openDatabase(database.config);
      db = opened.db;
      dialect = opened.dialect;
    });
    afterAll(async () => {
      await db?.destroy();
      await database?.drop();
    });

    it('creates every table with its columns, and a second run is a no-op', async () => {
      expect(await migrateToLatest(db)).toEqual([
        '0001-initial',
        '0002-verification-codes',
        '0003-held-quota',
        '0004-reservations',
        '0005-concurrency-limits',
        '0006-sessions',
        '0007-exact-identity-columns',
        '0008-channel-test-error',
        '0009-usage-rollups',
        '0010-request-ids',
        '0011-rate-limits',
        '0012-job-leases',
        '0013-two-factor',
        '0014-webhooks',
        '0015-log-details',
        '0016-latency-sketches',
        '0017-ledger-batches',
        '0018-channel-keys',
        '0019-budgets',
        '0021-channel-test-model',
        '0022-audit-log',
        '0023-oidc-identities',
        '0024-passkeys',
        '0025-organizations',
        '0026-prune-runs',
        '0027-member-caps',
        '0028-files',
        '0029-tasks',
        '0030-batch-lines',
        '0032-response-cache',
      ]);
      const tables = await db.introspection.getTables();
      for (const [table, columns] of Object.entries(EXPECTED_COLUMNS)) {
        const found = tables.find((candidate) => candidate.name === table);
        expect(found, `table ${table}`).toBeDefined();
        expect(found!.columns.map((column) => column.name).sort()).toEqual([...columns].sort());
      }
      expect(await migrateToLatest(db)).toEqual([]);
    });

    it('stores 64-bit quotas and reads them back as numbers', async () => {
      const id = await insertReturningId(
        dialect,
        db.insertInto('users').values({
          username: 'big',
          password_hash: 'x',
          display_name: 'big',
          role: 1,
          status: 1,
          email: '',
          github_id: '',
          wechat_id: '',
          access_token_hash: null,
          quota: 5_000_000_000,
          used_quota: 4_000_000_000,
          request_count: 3_000_000_000,
          group: 'default',
          aff_code: null,
          inviter_id: 0,
          session_version: 0,
          created_at: 1_700_000_000,
        }),
      );
      expect(id).toBeGreaterThan(0);
      const row = await db
        .selectFrom('users')
        .select(['quota', 'used_quota', 'request_count', 'group'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ quota: 5_000_000_000, used_quota: 4_000_000_000, request_count: 3_000_000_000, group: 'default' });
      await db
        .updateTable('users')
        .set((eb) => ({ quota: eb('quota', '+', 1) }))
        .where('id', '=', id)
        .execute();
      const after = await db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow();
      expect(after.quota).toBe(5_000_000_001);
    });

    it('keeps usernames, token keys and redemption keys unique, and allows many users without an access token', async () => {
      const base = {
        password_hash: 'x',
        display_name: '',
        role: 1,
        status: 1,
        email: '',
        github_id: '',
        wechat_id: '',
        access_token_hash: null,
        quota: 0,
        used_quota: 0,
        request_count: 0,
        group: 'default',
        aff_code: null,
        inviter_id: 0,
        session_version: 0,
        created_at: 0,
      };
      await db
        .insertInto('users')
        .values({ ...base, username: 'a1' })
        .execute();
      await db
        .insertInto('users')
        .values({ ...base, username: 'a2' })
        .execute();
      await expect(
        db
          .insertInto('users')
          .values({ ...base, username: 'a1' })
          .execute(),
      ).rejects.toThrow();
      const redemption = {
        user_id: 1,
        key: 'k'.repeat(32),
        status: 1,
        name: 'n',
        quota: 100,
        created_time: 0,
        redeemed_time: 0,
        redeemed_by: 0,
      };
      await db.insertInto('redemptions').values(redemption).execute();
      await expect(db.insertInto('redemptions').values(redemption).execute()).rejects.toThrow();
    });
  });
}
