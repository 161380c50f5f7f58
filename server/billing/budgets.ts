// Budgets that reset (common/budgets.ts), as the relay enforces them. A
// request of a key or user with a budget is admitted only if what was spent
// this period, plus what requests in flight hold, plus its own reservation
// fits in the budget; its charge then adds to the spend, written with the
// charge itself (quota.ts, sqliteLedger.ts).
//
// What requests in flight hold against a budget is counted here, in memory,
// per node: it is not a column, because the reservation's conditional UPDATE
// already is the hot path's one write. So on one node a budget is exact; with
// several nodes each adds its own holds and charges to the spend it last read
// (the cached key and user rows, refreshed within seconds), and a budget may be
// overrun by what other nodes charged meanwhile.
import { budgetPeriodAt, effectiveTimeZone, localTimeText, type BudgetPeriod } from '../../common/budgets';
import { relayError, type RelayError } from '../../common/relayError';
import type { TokenRow } from '../repositories/tokens';
import type { UserRow } from '../repositories/users';
import { amountText, bareAmount, type MoneyUnit } from './money';
import type { Reservation, SettlementBudget } from './quota';

type Period = Exclude<BudgetPeriod, ''>;

/** One budget's period on this node: the spend as known here and the holds of requests in flight. */
interface Entry {
  kind: 'token' | 'user';
  period: Period;
  /** Unix seconds: the current period's start and the next one's. */
  start: number;
  end: number;
  spent: number;
  held: number;
}

interface Hold {
  entries: Entry[];
  amount: number;
}

type BudgetRow =
  | Pick<TokenRow, 'id' | 'budget_period' | 'budget_quota' | 'period_spent' | 'period_start'>
  | Pick<UserRow, 'id' | 'budget_period' | 'budget_quota' | 'period_spent' | 'period_start'>;

const PERIOD_WORDS: Record<Period, string> = { day: 'daily', week: 'weekly', month: 'monthly' };

/** Seconds a client is told to wait when what it lacks is only held by requests in flight (as for quota). */
const HELD_RETRY_AFTER_SECONDS = 2;

export class BudgetTracker {
  private readonly entries = new Map<string, Entry>();
  private readonly holds = new WeakMap<Reservation, Hold>();
  /** The clock (ms); tests move it to roll a period. */
  clock: () => number = Date.now;

  /**
   * `timeZone`: the TimeZone option as it is now (empty: the server's zone);
   * `unit`: what a refusal says amounts in, as the options say now (money.ts).
   */
  constructor(
    private readonly timeZone: () => string,
    private readonly unit: () => MoneyUnit,
  ) {}

  get zone(): string {
    return effectiveTimeZone(this.timeZone());
  }

  /**
   * Holds `reservation.amount` against the key's and the user's budgets, or
   * refuses the request (nothing held) when one of them cannot cover it.
   */
  hold(token: BudgetRow, user: BudgetRow, reservation: Reservation): RelayError | undefined {
    const budgeted: Array<[Entry, BudgetRow]> = [];
    const now = this.clock();
    for (const [kind, row] of [
      ['token', token],
      ['user', user],
    ] as const) {
      const entry = this.entryOf(kind, row, now);
      if (entry) budgeted.push([entry, row]);
    }
    if (budgeted.length === 0) return undefined;
    for (const [entry, row] of budgeted) {
      const budget = Number(row.budget_quota);
      if (entry.spent + entry.held + reservation.amount > budget) return this.refusal(entry, budget);
    }
    const entries = budgeted.map(([entry]) => entry);
    for (const entry of entries) entry.held += reservation.amount;
    this.holds.set(reservation, { entries, amount: reservation.amount });
    return undefined;
  }

  /** Gives a reservation's hold back (released, or its ledger refused it). */
  release(reservation: Reservation): void {
    const hold = this.holds.get(reservation);
    if (!hold) return;
    this.holds.delete(reservation);
    for (const entry of hold.entries) entry.held -= hold.amount;
  }

  /**
   * The hold goes and the charge adds to the spend of the period it is made
   * in: what the settlement writes beside the charge (undefined: no budget).
   */
  settle(reservation: Reservation, charge: number): SettlementBudget | undefined {
    const hold = this.holds.get(reservation);
    if (!hold) return undefined;
    this.release(reservation);
    const now = this.clock();
    const written: SettlementBudget = {};
    for (const entry of hold.entries) {
      this.roll(entry, now);
      entry.spent += charge;
      if (entry.kind === 'token') written.tokenStart = entry.start;
      else written.userStart = entry.start;
    }
    return written;
  }

  /** The budget's entry for this period, made or brought up to date from the row at hand; undefined without a budget. */
  private entryOf(kind: Entry['kind'], row: BudgetRow, now: number): Entry | undefined {
    const period = row.budget_period as BudgetPeriod;
    if (!period) return undefined;
    const key = `${kind}:${Number(row.id)}`;
    let entry = this.entries.get(key);
    if (!entry || entry.period !== period) {
      // a new budget, or one whose period changed: the holds in flight stay counted
      const { start, end } = budgetPeriodAt(period, now, this.zone);
      entry = { kind, period, start, end, spent: 0, held: entry?.held ?? 0 };
      this.entries.set(key, entry);
    } else {
      this.roll(entry, now);
    }
    // the row may be behind this node's own charges (cached), or ahead of them (another node's): the larger is nearer
    const rowSpent = Number(row.period_start) === entry.start ? Number(row.period_spent) : 0;
    if (rowSpent > entry.spent) entry.spent = rowSpent;
    return entry;
  }

  /** A new period starts with nothing spent. */
  private roll(entry: Entry, now: number): void {
    if (now < entry.end * 1000 && now >= entry.start * 1000) return;
    const { start, end } = budgetPeriodAt(entry.period, now, this.zone);
    if (start === entry.start) return;
    entry.start = start;
    entry.end = end;
    entry.spent = 0;
  }

  /** Like a quota refusal (429, insufficient_quota), saying how much is spent and when the budget resets. */
  private refusal(entry: Entry, budget: number): RelayError {
    const whose = entry.kind === 'token' ? 'the API key' : 'your account';
    const resets = `${new Date(entry.end * 1000).toISOString()} (${localTimeText(entry.end, this.zone)})`;
    // "$0.0005 of $0.002 spent", or "250 of 1000 quota spent": the display currency when the operator shows it
    const unit = this.unit();
    const spent = `${bareAmount(entry.spent, unit)} of ${amountText(budget, unit)} spent this period`;
    const held = entry.held > 0 ? `, ${bareAmount(entry.held, unit)} held by requests in flight` : '';
    const error = relayError(
      429,
      `this request would exceed the ${PERIOD_WORDS[entry.period]} budget of ${whose}: ${spent}${held}; the budget resets at ${resets}`,
      'budget_exceeded',
      'insufficient_quota',
    );
    // requests in flight may give some back; otherwise nothing changes before the reset
    error.retryAfter = entry.held > 0 ? HELD_RETRY_AFTER_SECONDS : Math.max(1, entry.end - Math.floor(this.clock() / 1000));
    return error;
  }
}
