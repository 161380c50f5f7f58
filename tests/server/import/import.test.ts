// The import from one-api v0.5.3, one-api's latest release and new-api's
// latest release, into Switchboard on SQLite, PostgreSQL and MariaDB, and from
// the same rows held by MariaDB and PostgreSQL. After each import: the dry run
// before it changed nothing, the quotas add up to the source's, users sign in
// with their old passwords (and access tokens), and the official openai SDK
// relays with an imported key through an imported channel, billed from the
// imported balances.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../../server/config';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { computeQuota } from '../../../server/billing/prices';
import { runImport, quotaTotals, type ImportReport } from '../../../server/import/importer';
import { formatReport } from '../../../server/import/report';
import { NOT_RELAYED_YET } from '../../../server/import/products';
import { openSource } from '../../../server/import/source';
import { findChannelType } from '../../../common/channelTypes';
import { asBrowser, buildTestApp, login } from '../../support/app';
import { databaseTargets, type DatabaseTarget } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';
import { fixturePath } from './__fixtures__/build';
import { ALICE_KEY, FIXTURE_PASSWORDS, NEW_API_CHANNEL_TYPES, ONE_API_CHANNEL_TYPES } from './__fixtures__/values';
import { copyFixture, PRODUCTS, type Product } from './fixtureSchemas';

const targets = await databaseTargets('import');
const byName = (name: DatabaseTarget['name']) => targets.find((target) => target.name === name)!;

let emulator: OpenAIEmulator;
let scratch: string;
beforeAll(async () => {
  emulator = await startOpenAIEmulator();
  scratch = mkdtempSync(join(tmpdir(), 'switchboard-import-'));
});
afterAll(async () => {
  await emulator.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Source {
  location: string;
  drop(): Promise<void>;
}

/** The committed fixture, copied so its channel can point at this run's emulator. */
function sqliteSource(product: Product): Source {
  const path = join(scratch, `${product}-${Math.random().toString(36).slice(2)}.sqlite`);
  copyFileSync(fixturePath(product), path);
  const database = new SQLite(path);
  database.prepare('update channels set base_url = ? where id = 1').run(emulator.baseUrl);
  database.close();
  return { location: path, drop: async () => rmSync(path, { force: true }) };
}

/** The same rows in a MariaDB or PostgreSQL database of the product's schema. */
async function serverSource(product: Product, server: 'mysql' | 'postgres'): Promise<Source> {
  const database = await byName(server).create();
  const location = (database.config as { connectionString: string }).connectionString;
  const db =
    server === 'mysql'
      ? new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool({ uri: location, connectionLimit: 1 }) }) })
      : new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location, max: 1 }) }) });
  const fixture = new SQLite(fixturePath(product), { readonly: true });
  try {
    await copyFixture(product, fixture, db, server);
    await db.updateTable('channels').set({ base_url: emulator.baseUrl }).where('id', '=', 1).execute();
  } finally {
    fixture.close();
    await db.destroy();
  }
  return { location, drop: () => database.drop() };
}

/** A fresh Switchboard (its first start made root) on the target database. */
async function freshGateway(target: DatabaseTarget): Promise<{ app: FastifyInstance; config: DatabaseConfig; drop(): Promise<void> }> {
  if (target.name === 'sqlite') {
    const path = join(scratch, `target-${Math.random().toString(36).slice(2)}.db`);
    const config: DatabaseConfig = { dialect: 'sqlite', path };
    const app = await buildTestApp({}, config);
    return {
      app,
      config,
      drop: async () => {
        await app.close();
        for (const suffix of ['', '-wal', '-shm', '.lock']) rmSync(`${path}${suffix}`, { force: true });
      },
    };
  }
  const database = await target.create();
  const app = await buildTestApp({}, database.config);
  return {
    app,
    config: database.config,
    drop: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** The fixture's channels as the source holds them: id, type and name. */
function fixtureChannels(product: Product): Array<{ id: number; type: number; name: string }> {
  const fixture = new SQLite(fixturePath(product), { readonly: true });
  try {
    return fixture.prepare('select id, type, name from channels order by id').all() as Array<{ id: number; type: number; name: string }>;
  } finally {
    fixture.close();
  }
}

/** The type a source channel type is here, from the fixtures' own tables (one-api's numbers are ours). */
const expectedType = (product: Product, type: number) => (product.startsWith('new-api') ? NEW_API_CHANNEL_TYPES[type]?.ours : type);

/** What the import must do with each fixture channel: carry it with the type here, or leave it out as not relayed yet. */
function expectedChannels(product: Product) {
  const source = product.startsWith('new-api') ? 'new-api' : 'one-api';
  const carried: Array<{ id: number; type: number }> = [];
  const leftOut: string[] = [];
  const renumbered: string[] = [];
  for (const channel of fixtureChannels(product)) {
    const ours = expectedType(product, channel.type);
    if (ours !== undefined && findChannelType(ours)) {
      carried.push({ id: channel.id, type: ours });
      if (ours !== channel.type) renumbered.push(`#${channel.id} ${channel.name}: ${source} type ${channel.type} is type ${ours} here`);
    } else {
      const name = NOT_RELAYED_YET[source][channel.type];
      // a number the product defines must be named; one it never defined (the fixtures' type 99) is reported bare
      const defined = source === 'new-api' ? channel.type in NEW_API_CHANNEL_TYPES : channel.type in ONE_API_CHANNEL_TYPES;
      if (defined) expect(name, `${product} type ${channel.type} has no row here, so NOT_RELAYED_YET must name it`).toBeDefined();
      leftOut.push(name ? `channel type ${channel.type} (${name}) is not relayed yet` : `channel type ${channel.type} is not relayed yet`);
    }
  }
  return { carried, leftOut, renumbered };
}

/** Every row the import could touch, to compare before and after a dry run. */
async function snapshot(app: FastifyInstance) {
  const db = app.ctx.db;
  const tables = ['users', 'tokens', 'channels', 'abilities', 'redemptions', 'options', 'logs', 'usage_daily'] as const;
  const result: Record<string, unknown[]> = {};
  for (const table of tables) result[table] = await db.selectFrom(table).selectAll().execute();
  return JSON.parse(JSON.stringify(result, (_key, value) => (typeof value === 'bigint' ? Number(value) : value)));
}

/** The source's own sums (its live rows), read straight from it. */
async function sourceTotals(location: string) {
  const source = await openSource(location);
  try {
    const live = (table: string) =>
      source.columns.get(table)!.has('deleted_at')
        ? source.db.selectFrom(table).where('deleted_at', 'is', null)
        : source.db.selectFrom(table);
    const users = await live('users')
      .select((eb) => [eb.fn.sum('quota').as('quota'), eb.fn.sum('used_quota').as('used')])
      .executeTakeFirstOrThrow();
    const tokens = await live('tokens')
      .select((eb) => eb.fn.sum('remain_quota').as('remain'))
      .executeTakeFirstOrThrow();
    return { userQuota: Number(users.quota), userUsedQuota: Number(users.used), tokenRemainQuota: Number(tokens.remain) };
  } finally {
    await source.close();
  }
}

/** Secrets the fixtures hold: none may appear in a report. */
const FIXTURE_SECRETS = [
  'AliceChatApp'.repeat(4),
  'RootKey12345',
  'sk-good',
  'sk-ant-fixture',
  'azure-fixture-key',
  'sk-multi-fixture',
  '1111111111111111',
  '2222222222222222',
  '0123456789abcdef',
  'smtp-secret-fixture',
];

function expectNoSecrets(report: ImportReport) {
  const text = `${formatReport(report)}\n${JSON.stringify(report)}`;
  for (const secret of FIXTURE_SECRETS) expect(text).not.toContain(secret);
}

async function importAndUse(product: Product, source: Source, target: DatabaseTarget) {
  const gateway = await freshGateway(target);
  try {
    const { app } = gateway;
    const expected = await sourceTotals(source.location);
    const sourceFileBefore =
      target && !source.location.includes('://') ? createHash('sha256').update(readFileSync(source.location)).digest('hex') : undefined;

    // the dry run writes nothing
    const before = await snapshot(app);
    const opened = await openSource(source.location);
    let report: ImportReport;
    try {
      const dryRun = await runImport(opened, { db: app.ctx.db, dialect: gateway.config.dialect }, { withLogs: true });
      expect(dryRun.applied).toBe(false);
      expect(dryRun.refused).toBeUndefined();
      expect(dryRun.totals.targetAfter).toEqual(expected);
      expect(await snapshot(app)).toEqual(before);
      expectNoSecrets(dryRun);

      report = await runImport(opened, { db: app.ctx.db, dialect: gateway.config.dialect }, { apply: true, withLogs: true });
    } finally {
      await opened.close();
    }
    expect(report.applied).toBe(true);
    expect(report.detected.product).toBe(product.startsWith('new-api') ? 'new-api' : 'one-api');
    expectNoSecrets(report);
    if (sourceFileBefore) expect(createHash('sha256').update(readFileSync(source.location)).digest('hex')).toBe(sourceFileBefore);

    // exactness: the target holds what the source held, to the unit
    expect(report.totals.source).toEqual(expected);
    expect(await quotaTotals(app.ctx.db)).toEqual(expected);

    // what cannot be relayed here is left out and said so; abilities were rebuilt
    // every channel of every source type: carried with its type here, or named as not relayed yet
    const channels = report.tables.find((table) => table.table === 'channels')!;
    const expectedOutcome = expectedChannels(product);
    expect(channels.leftOut.map((entry) => entry.reason).sort()).toEqual([...expectedOutcome.leftOut].sort());
    expect(channels.leftOut.every((entry) => entry.count === 1)).toBe(true);
    const imported = await app.ctx.db.selectFrom('channels').select(['id', 'type']).orderBy('id').execute();
    expect(imported.map((row) => ({ id: Number(row.id), type: Number(row.type) }))).toEqual(expectedOutcome.carried);
    expect(channels.source).toBe(fixtureChannels(product).length);
    expect(channels.carried + expectedOutcome.leftOut.length).toBe(channels.source);
    const routes = await app.ctx.db
      .selectFrom('abilities')
      .select(['group', 'model'])
      .where('channel_id', '=', 1)
      .orderBy('group')
      .orderBy('model')
      .execute();
    expect(routes).toEqual([
      { group: 'default', model: 'gpt-3.5-turbo' },
      { group: 'default', model: 'gpt-4' },
      { group: 'vip', model: 'gpt-3.5-turbo' },
      { group: 'vip', model: 'gpt-4' },
    ]);
    expect(report.unknownOptions).toContain('FileUploadPermission');
    // new-api numbers its types its own way: its DeepSeek (43) is ours (36)
    const deepSeek = await app.ctx.db.selectFrom('channels').select('type').where('id', '=', 5).executeTakeFirst();
    if (product === 'one-api-v0.5.3') expect(deepSeek).toBeUndefined();
    else expect(Number(deepSeek!.type)).toBe(36);
    expect(report.renumbered).toEqual(expectedOutcome.renumbered);
    if (product === 'new-api-latest')
      expect(report.renumbered).toEqual(
        expect.arrayContaining(['#5 deepseek: new-api type 43 is type 36 here', '#7 cloudflare: new-api type 39 is type 37 here']),
      );
    else expect(report.renumbered).toEqual([]);
    // new-api's multi-key channel is one channel here, its keys each with the state new-api kept
    if (product === 'new-api-latest') {
      const pool = await app.ctx.db
        .selectFrom('channels')
        .select(['key', 'multi_key', 'key_strategy', 'status'])
        .where('id', '=', 6)
        .executeTakeFirstOrThrow();
      expect({ ...pool, multi_key: Number(pool.multi_key), status: Number(pool.status) }).toEqual({
        key: '',
        multi_key: 1,
        key_strategy: 'round_robin',
        status: 1,
      });
      const keys = await app.ctx.db
        .selectFrom('channel_keys')
        .select(['key', 'status', 'last_error'])
        .where('channel_id', '=', 6)
        .orderBy('id')
        .execute();
      expect(keys.map((row) => ({ ...row, status: Number(row.status) }))).toEqual([
        { key: 'sk-multi-fixture-one', status: 1, last_error: '' },
        { key: 'sk-multi-fixture-two', status: 3, last_error: 'Incorrect API key provided' },
        { key: 'sk-multi-fixture-three', status: 1, last_error: '' },
      ]);
      const listed = await app.ctx.db.selectFrom('channels').select('id').where('name', '=', 'openai pool').execute();
      expect(listed).toHaveLength(1);
    }
    // Cloudflare (one-api 37, new-api 39) is our 37, its account id in `other` (one-api kept it in `config`)
    const cloudflare = await app.ctx.db.selectFrom('channels').select(['type', 'other']).where('id', '=', 7).executeTakeFirst();
    if (product === 'one-api-v0.5.3') expect(cloudflare).toBeUndefined();
    else expect({ type: Number(cloudflare!.type), other: cloudflare!.other }).toEqual({ type: 37, other: 'cf-account-fixture' });
    const redemptions = await app.ctx.db.selectFrom('redemptions').select(['id', 'status']).orderBy('id').execute();
    expect(redemptions.map((row) => [Number(row.id), Number(row.status)])).toEqual([
      [1, 1],
      [2, 3],
    ]);
    // logs and their rollups: the two consume logs' 1,500 quota
    const daily = await app.ctx.db
      .selectFrom('usage_daily_users')
      .select((eb) => eb.fn.sum('quota').as('quota'))
      .executeTakeFirstOrThrow();
    expect(Number(daily.quota)).toBe(1_500);

    // old passwords sign in (Go's $2a$ bcrypt hashes), a wrong one does not; the old access token works
    await app.ctx.options.reload();
    const alice = await login(app, 'alice', FIXTURE_PASSWORDS.alice);
    await login(app, 'root', FIXTURE_PASSWORDS.root);
    // ids go on after the imported ones (PostgreSQL's sequences were moved past them)
    const created = (
      await asBrowser(app, alice, { method: 'POST', url: '/api/token/', payload: { name: 'after import', remain_quota: 10 } })
    ).json();
    expect(created).toMatchObject({ success: true });
    expect(created.data.id).toBeGreaterThan(4);
    await expect(login(app, 'alice', 'not-her-password')).rejects.toThrow();
    const self = await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: '0123456789abcdef0123456789abcdef' } });
    expect(self.json()).toMatchObject({ success: true, data: { username: 'root' } });

    // the old key relays through the imported channel, billed from the imported balances
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const client = new OpenAI({
      apiKey: ALICE_KEY,
      baseURL: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`,
      maxRetries: 0,
    });
    const balances = async () => {
      await bookkeepingFor(app.ctx, app.log).idle();
      const user = await app.ctx.db
        .selectFrom('users')
        .select(['quota', 'used_quota'])
        .where('username', '=', 'alice')
        .executeTakeFirstOrThrow();
      const token = await app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'used_quota'])
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      const channel = await app.ctx.db.selectFrom('channels').select('used_quota').where('id', '=', 1).executeTakeFirstOrThrow();
      return {
        user: Number(user.quota),
        userUsed: Number(user.used_quota),
        token: Number(token.remain_quota),
        channel: Number(channel.used_quota),
      };
    };
    const beforeCall = await balances();
    expect(beforeCall).toEqual({ user: 2_000_000, userUsed: 150_000, token: 1_000_000, channel: 3_000_000 });
    const completion = await client.chat.completions.create({
      model: 'gpt-4',
      messages: [{ role: 'user', content: 'hello there friend' }],
    });
    expect(completion.choices[0].message.content).toBe('word0 word1 word2 word3 word4');
    const charge = computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 });
    expect(charge).toBeGreaterThan(0);
    expect(await balances()).toEqual({
      user: 2_000_000 - charge,
      userUsed: 150_000 + charge,
      token: 1_000_000 - charge,
      channel: 3_000_000 + charge,
    });
    expect(emulator.requests.at(-1)!.headers.authorization).toBe('Bearer sk-good');
  } finally {
    await gateway.drop();
    await source.drop();
  }
}

for (const target of targets) {
  describe.runIf(target.available)(`import into ${target.name}`, () => {
    for (const product of PRODUCTS) {
      it(`from ${product} (a SQLite file)`, async () => {
        await importAndUse(product, sqliteSource(product), target);
      });
    }
  });
}

for (const server of ['mysql', 'postgres'] as const) {
  describe.runIf(byName(server).available)(`import from ${server === 'mysql' ? 'MariaDB' : 'PostgreSQL'} sources into SQLite`, () => {
    for (const product of PRODUCTS) {
      it(`from ${product}`, async () => {
        await importAndUse(product, await serverSource(product, server), byName('sqlite'));
      });
    }
  });
}

describe('a failure half-way', () => {
  it('writes nothing: users, tokens, channels, codes and options are one transaction', async () => {
    const gateway = await freshGateway(byName('sqlite'));
    const source = sqliteSource('one-api-latest');
    const opened = await openSource(source.location);
    try {
      // the redemption codes are written after the users, tokens and channels
      await sql`create trigger refuse_codes before insert on redemptions begin select raise(abort, 'refused by the test'); end`.execute(
        gateway.app.ctx.db,
      );
      const before = await snapshot(gateway.app);
      const failure = await runImport(opened, { db: gateway.app.ctx.db, dialect: gateway.config.dialect }, { apply: true }).catch(
        (error: Error) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(/^writing redemptions failed: .*refused by the test/);
      expect(await snapshot(gateway.app)).toEqual(before);
    } finally {
      await opened.close();
      await gateway.drop();
      await source.drop();
    }
  });
});

describe('logs copied again', () => {
  it('after an import without them, and once more: each log is copied once', async () => {
    const gateway = await freshGateway(byName('sqlite'));
    const source = sqliteSource('one-api-latest');
    const opened = await openSource(source.location);
    try {
      const target = { db: gateway.app.ctx.db, dialect: gateway.config.dialect };
      await runImport(opened, target, { apply: true });
      const totals = await quotaTotals(gateway.app.ctx.db);
      expect(await gateway.app.ctx.db.selectFrom('logs').select('id').execute()).toEqual([]);
      const counts = async () => {
        const logs = await gateway.app.ctx.db.selectFrom('logs').select(['id', 'quota']).orderBy('id').execute();
        const rollup = await gateway.app.ctx.db
          .selectFrom('usage_hourly')
          .select((eb) => eb.fn.sum('quota').as('quota'))
          .executeTakeFirstOrThrow();
        return { logs: logs.map((log) => [Number(log.id), Number(log.quota)]), rollupQuota: Number(rollup.quota) };
      };
      for (let run = 0; run < 2; run += 1) {
        const report = await runImport(opened, target, { apply: true, withLogs: true, logBatchSize: 2 });
        expect(report.refused).toBeUndefined();
        expect(report.resumed).toBe(true);
        expect(formatReport(report)).toContain('resumed:');
        expect(await counts()).toEqual({
          logs: [
            [1, 0],
            [2, 1_000],
            [3, 500],
          ],
          rollupQuota: 1_500,
        });
        expect(await quotaTotals(gateway.app.ctx.db)).toEqual(totals);
      }
    } finally {
      await opened.close();
      await gateway.drop();
      await source.drop();
    }
  });
});

describe('a target that already holds users', () => {
  it('is refused without --merge; --merge keeps ids apart and reports the clashes', async () => {
    const gateway = await freshGateway(byName('sqlite'));
    const first = sqliteSource('one-api-latest');
    const second = sqliteSource('new-api-latest');
    try {
      const { app } = gateway;
      const target = { db: app.ctx.db, dialect: gateway.config.dialect };
      const openedFirst = await openSource(first.location);
      await runImport(openedFirst, target, { apply: true });
      await openedFirst.close();
      const afterFirst = await snapshot(app);
      const totalsAfterFirst = await quotaTotals(app.ctx.db);

      const opened = await openSource(second.location);
      try {
        const refused = await runImport(opened, target, { apply: true });
        expect(refused.applied).toBe(false);
        expect(refused.refused).toMatch(/already holds data .*--merge/);
        expect(formatReport(refused)).toContain('REFUSED');
        expect(await snapshot(app)).toEqual(afterFirst);

        const merged = await runImport(opened, target, { apply: true, merge: true });
        expect(merged.applied).toBe(true);
        expectNoSecrets(merged);
        // the same usernames and keys are in both fixtures: users renamed, tokens and codes left out
        expect(merged.clashes).toEqual(
          expect.arrayContaining([
            'username "alice" (source user #2) is taken in the target: imported as "alice.2"',
            expect.stringMatching(/^token #1 chat app of "alice.2": its key is already a target token's key: left out$/),
            expect.stringMatching(/^redemption code #1 gift: the code is already a target code: left out$/),
          ]),
        );
        const users = await app.ctx.db.selectFrom('users').select(['id', 'username']).orderBy('id').execute();
        expect(users.map((user) => [Number(user.id), user.username])).toEqual([
          [1, 'root'],
          [2, 'alice'],
          [3, 'bob'],
          [5, 'carol'],
          [6, 'root.1'],
          [7, 'alice.2'],
          [8, 'bob.3'],
          [10, 'carol.5'],
        ]);
        // exactly the carried amounts were added
        expect(await quotaTotals(app.ctx.db)).toEqual({
          userQuota: totalsAfterFirst.userQuota + merged.totals.carried.userQuota,
          userUsedQuota: totalsAfterFirst.userUsedQuota + merged.totals.carried.userUsedQuota,
          tokenRemainQuota: totalsAfterFirst.tokenRemainQuota + merged.totals.carried.tokenRemainQuota,
        });
        expect(merged.totals.carried.tokenRemainQuota).toBe(0);
        // the renamed user still signs in with the old password
        await login(app, 'alice.2', FIXTURE_PASSWORDS.alice);
      } finally {
        await opened.close();
      }
    } finally {
      await gateway.drop();
      await first.drop();
      await second.drop();
    }
  });
});

describe('the types not relayed yet', () => {
  it('are one list that names exactly the source types without a row here', () => {
    // a number with a row is relayed: it must leave NOT_RELAYED_YET when its row is merged
    for (const type of Object.keys(NOT_RELAYED_YET['one-api']).map(Number))
      expect(findChannelType(type), `one-api ${type} has a row now: take it out of NOT_RELAYED_YET`).toBeUndefined();
    for (const type of Object.keys(NOT_RELAYED_YET['new-api']).map(Number)) {
      const ours = NEW_API_CHANNEL_TYPES[type]?.ours;
      expect(ours !== undefined && findChannelType(ours), `new-api ${type} has a row now: take it out of NOT_RELAYED_YET`).toBeFalsy();
    }
    // and every source type without a row is in it
    const oneApiMissing = Object.keys(ONE_API_CHANNEL_TYPES)
      .map(Number)
      .filter((type) => !findChannelType(type));
    expect(oneApiMissing).toEqual(Object.keys(NOT_RELAYED_YET['one-api']).map(Number));
    const newApiMissing = Object.entries(NEW_API_CHANNEL_TYPES)
      .filter(([, { ours }]) => ours === undefined || !findChannelType(ours))
      .map(([type]) => Number(type));
    expect(newApiMissing).toEqual(Object.keys(NOT_RELAYED_YET['new-api']).map(Number));
  });

  it('hold a channel of every source type in the latest fixtures', () => {
    // and one of a number one-api never defined (99), which no import can carry
    expect([...new Set(fixtureChannels('one-api-latest').map((channel) => channel.type))].sort((a, b) => a - b)).toEqual([
      ...Object.keys(ONE_API_CHANNEL_TYPES).map(Number),
      99,
    ]);
    expect([...new Set(fixtureChannels('new-api-latest').map((channel) => channel.type))].sort((a, b) => a - b)).toEqual(
      Object.keys(NEW_API_CHANNEL_TYPES).map(Number),
    );
  });
});
