// The relay's own writes on SQLite (reservations, releases, settlements and
// consume logs) skip Kysely: each is a prepared better-sqlite3 statement run
// synchronously, so a reservation costs its UPDATE and nothing else (no query
// compilation, no connection lock, no promise per step). Kysely's share of the
// relay's CPU was a tenth under load, more than SQLite's own.
//
// The same connection serves Kysely. While a Kysely transaction is open on it
// (an admin saving a channel, say), a statement run here would silently join
// that transaction and roll back with it; so then, and only then, the work
// goes through Kysely instead, which waits for the transaction to end.
//
// Reservations that arrive in the same turn of the event loop share one
// transaction (group commit: SQLite pays a WAL append per commit); each is
// still its own pair of conditional UPDATEs, applied in arrival order. A
// reservation made while no other request is in flight has nobody to share
// with, and commits at once instead of waiting a turn.
//
// The checkpointer may hold every write here for a moment (holdWrites), so
// that the WAL can start over under steady traffic (db/checkpointer.ts):
// reservations queue, settlements and logs wait, and all go on when it lets go.
import type SQLite from 'better-sqlite3';
import { logRow, logValues, type NewLog } from '../repositories/logs';
import { ROLLUP_TABLES, rollupsOf, sketchMerges, upsertStatement, type RollupWrite } from '../repositories/usageRollups';
import { settlementTotals, type QuotaLedger, type Reservation, type ReserveResult, type Settlement } from './quota';

const OK: ReserveResult = { ok: true };

/** The logs columns, in the order logRow (and logValues) gives them. */
const LOG_COLUMNS = Object.keys(logRow({ userId: 0, username: '', type: 0, content: '' }));
/** Rows per multi-row INSERT: one statement run binds this many rows (17 x 50 values, far below SQLite's limit). */
const LOG_ROWS_PER_INSERT = 50;
const rowPlaceholders = `(${LOG_COLUMNS.map(() => '?').join(', ')})`;

/** Sketch statements kept compiled: each text is one count of channels in a batch. */
const MAX_SKETCH_STATEMENTS = 64;

interface Queued {
  reservation: Reservation;
  resolve: (result: ReserveResult) => void;
  reject: (error: unknown) => void;
}

export class SqliteLedger implements QuotaLedger {
  private readonly takeFromUser: SQLite.Statement;
  private readonly takeFromToken: SQLite.Statement;
  private readonly giveToUser: SQLite.Statement;
  private readonly giveToToken: SQLite.Statement;
  private readonly settleUser: SQLite.Statement;
  private readonly settleLimitedToken: SQLite.Statement;
  private readonly settleUnlimitedToken: SQLite.Statement;
  private readonly settleChannel: SQLite.Statement;
  private readonly spendUser: SQLite.Statement;
  private readonly spendToken: SQLite.Statement;
  private readonly spendMember: SQLite.Statement;
  private readonly spendMemberPeriod: SQLite.Statement;
  private readonly insertLog: SQLite.Statement;
  private readonly insertLogs50: SQLite.Statement;
  /** Each rollup table's upsert, by table name. */
  private readonly upsertRollup = new Map<string, SQLite.Statement>();
  /** The sketch merges' statements by text (prepared). */
  private readonly sketchStatements = new Map<string, SQLite.Statement>();
  private queue: Queued[] = [];
  /** Set while the checkpointer holds the writes: resolves when it lets go. */
  private held?: Promise<void>;
  // transaction functions made once: making one costs about as much as the UPDATE it wraps
  private readonly takeAll: (batch: readonly Queued[]) => ReserveResult[];
  private readonly takeOne: (reservation: Reservation) => ReserveResult;
  private readonly giveBack: (reservation: Reservation) => void;
  private readonly settleAll: (
    totals: ReturnType<typeof settlementTotals>,
    logs: readonly NewLog[],
    rollups: readonly RollupWrite[],
  ) => void;
  private readonly insertAll: (rows: readonly NewLog[], rollups: readonly RollupWrite[]) => void;

  constructor(
    private readonly database: SQLite.Database,
    /** Kysely's ledger on the same database, for when a Kysely transaction is open. */
    private readonly fallback: QuotaLedger,
  ) {
    // held_quota counts what requests in flight hold, in the same UPDATE as the balance (see quota.ts)
    this.takeFromUser = database.prepare('update users set quota = quota - ?, held_quota = held_quota + ? where id = ? and quota >= ?');
    this.takeFromToken = database.prepare(
      'update tokens set remain_quota = remain_quota - ?, held_quota = held_quota + ? where id = ? and remain_quota >= ?',
    );
    this.giveToUser = database.prepare('update users set quota = quota + ?, held_quota = held_quota - ? where id = ?');
    this.giveToToken = database.prepare('update tokens set remain_quota = remain_quota + ?, held_quota = held_quota - ? where id = ?');
    // parameters are positional: binding by name costs about as much as the insert itself
    // `column + refund - charge`, with no floor (see quota.ts), and the refund off held_quota: (refund - charge, refund, ...)
    this.settleUser = database.prepare(
      'update users set quota = quota + ?, held_quota = held_quota - ?, used_quota = used_quota + ?, request_count = request_count + ? where id = ?',
    );
    this.settleLimitedToken = database.prepare(
      'update tokens set remain_quota = remain_quota + ?, held_quota = held_quota - ?, used_quota = used_quota + ? where id = ?',
    );
    this.settleUnlimitedToken = database.prepare('update tokens set used_quota = used_quota + ? where id = ?');
    this.settleChannel = database.prepare('update channels set used_quota = used_quota + ? where id = ?');
    // a budget's spend, as repositories/ledger.ts's spentSql and periodStartSql: (start, charge, start, charge, start, id)
    const spend = (table: string) =>
      database.prepare(
        `update ${table} set period_spent = case when period_start = ? then period_spent + ? when period_start < ? then ? else period_spent end, period_start = max(period_start, ?) where id = ?`,
      );
    this.spendUser = spend('users');
    this.spendToken = spend('tokens');
    // a member's spend in an organisation: all of it, and the period's as above (charge, start, period's charge, start, period's charge, start, organization, user)
    this.spendMember = database.prepare(
      'update organization_members set spent_quota = spent_quota + ? where organization_id = ? and user_id = ?',
    );
    this.spendMemberPeriod = database.prepare(
      'update organization_members set spent_quota = spent_quota + ?, period_spent = case when period_start = ? then period_spent + ? when period_start < ? then ? else period_spent end, period_start = max(period_start, ?) where organization_id = ? and user_id = ?',
    );
    this.insertLog = database.prepare(`insert into logs (${LOG_COLUMNS.join(', ')}) values ${rowPlaceholders}`);
    this.insertLogs50 = database.prepare(
      `insert into logs (${LOG_COLUMNS.join(', ')}) values ${Array(LOG_ROWS_PER_INSERT).fill(rowPlaceholders).join(', ')}`,
    );
    for (const table of ROLLUP_TABLES) this.upsertRollup.set(table.name, database.prepare(upsertStatement(table)));
    this.takeAll = database.transaction((batch: readonly Queued[]) => batch.map((queued) => this.take(queued.reservation)));
    this.takeOne = database.transaction((reservation: Reservation) => this.take(reservation));
    this.giveBack = database.transaction(({ userId, tokenId, amount }: Reservation) => {
      this.giveToUser.run(amount, amount, userId);
      this.giveToToken.run(amount, amount, tokenId);
    });
    // the charges, their consume logs and rollups commit together: a kill -9 leaves all or none
    this.settleAll = database.transaction(
      (totals: ReturnType<typeof settlementTotals>, logs: readonly NewLog[], rollups: readonly RollupWrite[]) => {
        for (const [id, { refund, charge, requests }] of totals.users) this.settleUser.run(refund - charge, refund, charge, requests, id);
        for (const { tokenId, used, limited } of totals.tokens) {
          if (limited) this.settleLimitedToken.run(limited.refund - limited.charge, limited.refund, used, tokenId);
          else this.settleUnlimitedToken.run(used, tokenId);
        }
        for (const [id, { start, charge }] of totals.userSpends) this.spendUser.run(start, charge, start, charge, start, id);
        for (const [id, { start, charge }] of totals.tokenSpends) this.spendToken.run(start, charge, start, charge, start, id);
        for (const { organizationId, userId, charge, period } of totals.memberSpends) {
          if (period)
            this.spendMemberPeriod.run(
              charge,
              period.start,
              period.charge,
              period.start,
              period.charge,
              period.start,
              organizationId,
              userId,
            );
          else this.spendMember.run(charge, organizationId, userId);
        }
        for (const [id, charge] of totals.channels) this.settleChannel.run(charge, id);
        this.insertRows(logs);
        this.upsertRollups(rollups);
      },
    );
    this.insertAll = database.transaction((rows: readonly NewLog[], rollups: readonly RollupWrite[]) => {
      this.insertRows(rows);
      this.upsertRollups(rollups);
    });
  }

  /** Inside a transaction: each rollup row of the batch, one upsert each, then the channels' sketches merged (usageRollups.ts). */
  private upsertRollups(writes: readonly RollupWrite[]): void {
    for (const write of writes) {
      const upsert = this.upsertRollup.get(write.table.name)!;
      for (const row of write.rows) upsert.run(row);
      for (const merge of sketchMerges(write, false)) {
        const stored = this.prepared(merge.read.text).all(merge.read.parameters) as Array<Record<string, unknown>>;
        for (const update of merge.write(stored)) this.prepared(update.text).run(update.parameters);
      }
    }
  }

  /**
   * A sketch merge's statement, compiled once per text: the text depends only on how many channels a batch
   * settles, so a few texts recur batch after batch (bounded: cleared when full).
   */
  private prepared(text: string): SQLite.Statement {
    let statement = this.sketchStatements.get(text);
    if (!statement) {
      if (this.sketchStatements.size >= MAX_SKETCH_STATEMENTS) this.sketchStatements.clear();
      statement = this.database.prepare(text);
      this.sketchStatements.set(text, statement);
    }
    return statement;
  }

  /** Inside a transaction: whole groups of rows in one statement each (a run costs far more than its binding), then the rest one by one. */
  private insertRows(rows: readonly NewLog[]): void {
    let index = 0;
    for (; index + LOG_ROWS_PER_INSERT <= rows.length; index += LOG_ROWS_PER_INSERT) {
      const values: unknown[] = [];
      for (let row = index; row < index + LOG_ROWS_PER_INSERT; row += 1) values.push(...logValues(rows[row]));
      this.insertLogs50.run(values);
    }
    for (; index < rows.length; index += 1) this.insertLog.run(logValues(rows[index]));
  }

  /**
   * Holds every write of this ledger until the returned function is called
   * (reservations queue, settlements and logs wait). One hold at a time: a
   * second call while held returns a function that does nothing.
   */
  holdWrites(): () => void {
    if (this.held) return () => {};
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    this.held = held;
    return () => {
      if (this.held !== held) return;
      this.held = undefined;
      letGo();
      if (this.queue.length > 0) this.commitReservations();
    };
  }

  /** Resolves once no hold is on. */
  private async unheld(): Promise<void> {
    while (this.held) await this.held;
  }

  /** Whether a statement run now would stand on its own, outside any Kysely transaction. */
  private get free(): boolean {
    return !this.database.inTransaction;
  }

  reserve(reservation: Reservation, hint?: { alone?: boolean }): Promise<ReserveResult> {
    if (reservation.amount <= 0) return Promise.resolve(OK);
    if (hint?.alone && this.queue.length === 0 && !this.held && this.free) {
      // the executor runs takeAlone now; a throw becomes the promise's rejection
      return new Promise((resolve) => resolve(this.takeAlone(reservation)));
    }
    return new Promise((resolve, reject) => {
      if (this.queue.push({ reservation, resolve, reject }) === 1) setImmediate(() => this.commitReservations());
    });
  }

  private commitReservations(): void {
    // the hold's end commits what queued meanwhile
    if (this.held || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    if (!this.free) {
      for (const queued of batch) this.fallback.reserve(queued.reservation).then(queued.resolve, queued.reject);
      return;
    }
    let results: ReserveResult[];
    try {
      results = batch.length === 1 ? [this.takeAlone(batch[0].reservation)] : this.takeAll(batch);
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    batch.forEach((queued, index) => queued.resolve(results[index]));
  }

  /** One reservation on its own: a transaction for a limited token's two UPDATEs; an unlimited token's one conditional UPDATE is atomic without. */
  private takeAlone(reservation: Reservation): ReserveResult {
    return reservation.limitedToken ? this.takeOne(reservation) : this.take(reservation);
  }

  /** The user's part, then the token's; a token shortfall gives the user's part back. */
  private take({ userId, tokenId, limitedToken, amount }: Reservation): ReserveResult {
    if (this.takeFromUser.run(amount, amount, userId, amount).changes !== 1) return { ok: false, reason: 'user' };
    if (!limitedToken || this.takeFromToken.run(amount, amount, tokenId, amount).changes === 1) return OK;
    this.giveToUser.run(amount, amount, userId);
    return { ok: false, reason: 'token' };
  }

  async release(reservation: Reservation): Promise<void> {
    if (reservation.amount <= 0) return;
    if (this.held) await this.unheld();
    if (!this.free) return this.fallback.release(reservation);
    if (reservation.limitedToken) this.giveBack(reservation);
    else this.giveToUser.run(reservation.amount, reservation.amount, reservation.userId);
  }

  async settle(settlements: readonly Settlement[], failures: readonly NewLog[] = []): Promise<void> {
    if (settlements.length === 0 && failures.length === 0) return;
    if (this.held) await this.unheld();
    if (!this.free) return this.fallback.settle(settlements, failures);
    const logs: NewLog[] = [];
    for (const settlement of settlements) if (settlement.log) logs.push(settlement.log);
    logs.push(...failures);
    this.settleAll(settlementTotals(settlements), logs, rollupsOf(logs));
  }

  async insertLogs(rows: readonly NewLog[]): Promise<void> {
    if (rows.length === 0) return;
    if (this.held) await this.unheld();
    if (!this.free) return this.fallback.insertLogs(rows);
    this.insertAll(rows, rollupsOf(rows));
  }
}
