// The SQLite ledger runs prepared statements on the connection Kysely also
// uses. While a Kysely transaction is open on it, a statement run directly
// would join that transaction and roll back with it: the ledger must wait
// for it instead, so a reservation, a settlement or a log survives a
// rollback of somebody else's work.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { logRow, logValues } from '../../../server/repositories/logs';
import { SqliteLedger } from '../../../server/billing/sqliteLedger';
import { buildTestApp } from '../../support/app';

describe('the SQLite ledger', () => {
  let app: FastifyInstance;
  const balances = async () => {
    const user = await app.ctx.db
      .selectFrom('users')
      .select(['quota', 'used_quota', 'request_count'])
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    return { quota: Number(user.quota), used: Number(user.used_quota), requests: Number(user.request_count) };
  };
  const reservation = (amount: number) => ({ userId: 1, tokenId: 0, limitedToken: false, amount });

  beforeAll(async () => {
    app = await buildTestApp();
    await app.ctx.db.updateTable('users').set({ quota: 10_000 }).where('id', '=', 1).execute();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is the ledger of a SQLite app', () => {
    expect(app.ctx.ledger).toBeInstanceOf(SqliteLedger);
  });

  it('reserves, settles and logs with its own statements', async () => {
    const before = await balances();
    expect(await app.ctx.ledger.reserve(reservation(300))).toEqual({ ok: true });
    expect((await balances()).quota).toBe(before.quota - 300);
    await app.ctx.ledger.settle([{ reservation: reservation(300), charge: 120, channelId: 0, countRequest: true }]);
    expect(await balances()).toEqual({ quota: before.quota - 120, used: before.used + 120, requests: before.requests + 1 });
    expect(await app.ctx.ledger.reserve(reservation(before.quota))).toEqual({ ok: false, reason: 'user' });
    await app.ctx.ledger.insertLogs([
      { userId: 1, username: 'root', type: LogType.consume, content: 'ledger row', quota: 120, modelName: 'gpt-4', isStream: true },
    ]);
    const row = await app.ctx.db.selectFrom('logs').selectAll().where('content', '=', 'ledger row').executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      user_id: 1,
      username: 'root',
      type: LogType.consume,
      quota: 120,
      model_name: 'gpt-4',
      is_stream: 1,
      estimated: 0,
    });
  });

  it('binds log values in the column order of logRow', () => {
    const full = {
      userId: 3,
      username: 'u',
      type: LogType.consume,
      content: 'c',
      quota: 9,
      tokenName: 't',
      tokenId: 4,
      modelName: 'm',
      channelId: 5,
      promptTokens: 6,
      completionTokens: 7,
      elapsedMs: 8,
      isStream: true,
      estimated: true,
      createdAt: 1700,
    };
    expect(logValues(full)).toEqual(Object.values(logRow(full)));
    const sparse = { userId: 1, username: 'root', type: LogType.system, content: 'x', createdAt: 1 };
    expect(logValues(sparse)).toEqual(Object.values(logRow(sparse)));
  });

  it('writes a batch of logs in whole groups and singles, every row exactly once and in order', async () => {
    const rows = Array.from({ length: 123 }, (_, index) => ({
      userId: 1,
      username: 'root',
      type: LogType.consume,
      content: `batch row ${index}`,
      quota: index,
      promptTokens: index % 7,
      isStream: index % 2 === 0,
    }));
    await app.ctx.ledger.insertLogs(rows);
    const written = await app.ctx.db
      .selectFrom('logs')
      .select(['content', 'quota', 'prompt_tokens', 'is_stream'])
      .where('content', 'like', 'batch row %')
      .orderBy('id')
      .execute();
    expect(written).toEqual(
      rows.map((row) => ({ content: row.content, quota: row.quota, prompt_tokens: row.promptTokens, is_stream: row.isStream ? 1 : 0 })),
    );
  });

  it('commits a reservation made alone at once, token and user together or neither', async () => {
    const token = await app.ctx.db
      .insertInto('tokens')
      .values({
        user_id: 1,
        key: 'ledger-alone-key',
        name: 'alone',
        status: 1,
        created_time: 0,
        accessed_time: 0,
        expired_time: -1,
        remain_quota: 50,
        unlimited_quota: 0,
        used_quota: 0,
      })
      .executeTakeFirstOrThrow();
    const tokenId = Number(token.insertId);
    const before = await balances();
    const limited = (amount: number) => ({ userId: 1, tokenId, limitedToken: true, amount });
    expect(await app.ctx.ledger.reserve(limited(80), { alone: true })).toEqual({ ok: false, reason: 'token' });
    expect((await balances()).quota).toBe(before.quota);
    expect(await app.ctx.ledger.reserve(limited(30), { alone: true })).toEqual({ ok: true });
    const remain = await app.ctx.db.selectFrom('tokens').select('remain_quota').where('id', '=', tokenId).executeTakeFirstOrThrow();
    expect(Number(remain.remain_quota)).toBe(20);
    expect((await balances()).quota).toBe(before.quota - 30);
    await app.ctx.ledger.release(limited(30));
  });

  it('waits for an open Kysely transaction instead of joining it, so a rollback takes none of its writes', async () => {
    const before = await balances();
    const pending: Array<Promise<unknown>> = [];
    await expect(
      app.ctx.db.transaction().execute(async (transaction) => {
        await transaction.updateTable('users').set({ display_name: 'rolled back' }).where('id', '=', 1).execute();
        pending.push(app.ctx.ledger.reserve(reservation(500), { alone: true }));
        pending.push(app.ctx.ledger.settle([{ reservation: reservation(0), charge: 40, channelId: 0, countRequest: true }]));
        pending.push(
          app.ctx.ledger.insertLogs([{ userId: 1, username: 'root', type: LogType.consume, content: 'kept through a rollback' }]),
        );
        pending.push(app.ctx.ledger.release(reservation(200)));
        // long enough for the ledger's group commit to come due inside the transaction
        await new Promise((wake) => setTimeout(wake, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const [reserved] = await Promise.all(pending);
    expect(reserved).toEqual({ ok: true });
    const user = await app.ctx.db.selectFrom('users').select('display_name').where('id', '=', 1).executeTakeFirstOrThrow();
    expect(user.display_name).not.toBe('rolled back');
    expect(await balances()).toEqual({ quota: before.quota - 500 - 40 + 200, used: before.used + 40, requests: before.requests + 1 });
    const kept = await app.ctx.db.selectFrom('logs').select('id').where('content', '=', 'kept through a rollback').execute();
    expect(kept).toHaveLength(1);
  });

  it('holds every write while the checkpointer asks, then makes them all, in order', async () => {
    const ledger = app.ctx.ledger as SqliteLedger;
    const before = await balances();
    const letGo = ledger.holdWrites();
    // a second hold while one is on changes nothing
    ledger.holdWrites()();
    const done: string[] = [];
    const pending = [
      ledger.reserve(reservation(700), { alone: true }).then((result) => done.push(`alone ${JSON.stringify(result)}`)),
      ledger.reserve(reservation(10)).then(() => done.push('queued')),
      ledger.settle([{ reservation: reservation(0), charge: 25, channelId: 0, countRequest: true }]).then(() => done.push('settled')),
      ledger
        .insertLogs([{ userId: 1, username: 'root', type: LogType.consume, content: 'written after the hold' }])
        .then(() => done.push('logged')),
      ledger.release(reservation(100)).then(() => done.push('released')),
    ];
    await new Promise((wake) => setTimeout(wake, 30));
    expect(done).toEqual([]);
    expect(await balances()).toEqual(before);
    letGo();
    await Promise.all(pending);
    expect(done.slice(0, 2)).toEqual(['alone {"ok":true}', 'queued']);
    expect(done.slice(2).sort()).toEqual(['logged', 'released', 'settled']);
    expect(await balances()).toEqual({ quota: before.quota - 700 - 10 - 25 + 100, used: before.used + 25, requests: before.requests + 1 });
    const logged = await app.ctx.db.selectFrom('logs').select('id').where('content', '=', 'written after the hold').execute();
    expect(logged).toHaveLength(1);
    // letting go twice is harmless, and the next reservation made alone commits at once again
    letGo();
    expect(await ledger.reserve(reservation(1), { alone: true })).toEqual({ ok: true });
    expect((await balances()).quota).toBe(before.quota - 700 - 10 - 25 + 100 - 1);
  });
});
