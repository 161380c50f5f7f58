// Budgets that reset (common/budgets.ts), as the relay enforces them. A
// request of a key or user with a budget is admitted only if what was spent
// this period, plus what requests in flight hold, plus its own reservation
// fits in the budget; its charge then adds to the spend, written with the
// charge itself (quota.ts, sqliteLedger.ts).
//
// A member's key of an organisation (tokens.member_user_id) is held the same
// way against the member's caps (organization_members): a lifetime cap on all
// they spent through the organisation, and one per period. Every charge of
// such a key adds to the member's spend, capped or not, in the settlement's
// write beside the organisation's charge.
//
// What requests in flight hold against a budget is counted here, in memory,
// per node: it is not a column, because the reservation's conditional UPDATE
// already is the hot path's one write. So on one node a budget is exact; with
// several nodes each adds its own holds and charges to the spend it last read
// (the cached key and user rows, refreshed within seconds), and a budget may be
// overrun by what other nodes charged meanwhile.
import { budgetPeriodAt, effectiveTimeZone, localTimeText, type BudgetPeriod } from '../../common/budgets';
import { relayError, type RelayError } from '../../common/relayError';
import type { MemberCapRow } from '../repositories/relayAuth';
import type { TokenRow } from '../repositories/tokens';
import type { UserRow } from '../repositories/users';
import { amountText, bareAmount, type MoneyUnit } from './money';
import type { Reservation, SettlementBudget } from './quota';

type Period = Exclude<BudgetPeriod, ''>;

/** One budget's period on this node (a lifetime cap's: endless): the spend as known here and the holds of requests in flight. */
interface Entry {
  kind: 'token' | 'user' | 'member' | 'memberLifetime';
  period: Period | '';
  /** Unix seconds: the current period's start and the next one's. */
  start: number;
  end: number;
  spent: number;
  held: number;
}

interface Hold {
  entries: Entry[];
  amount: number;
  /** The member whose spend the charge adds to (a member's key of an organisation). */
  member?: { organizationId: number; userId: number };
}

type BudgetRow =
  | Pick<TokenRow, 'id' | 'budget_period' | 'budget_quota' | 'period_spent' | 'period_start'>
  | Pick<UserRow, 'id' | 'budget_period' | 'budget_quota' | 'period_spent' | 'period_start'>;

/** A budget's row, or a member's period cap read as one (its id: `organization:user`). */
type PeriodRow = Omit<BudgetRow, 'id'> & { id: number | string };

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
   * Holds `reservation.amount` against the key's and the user's budgets and,
   * for a member's key of an organisation, the member's caps; or refuses the
   * request (nothing held) when one of them cannot cover it.
   */
  hold(token: BudgetRow, user: BudgetRow, reservation: Reservation, member?: MemberCapRow): RelayError | undefined {
    const budgeted: Array<[Entry, number]> = [];
    const now = this.clock();
    for (const [kind, row] of [
      ['token', token],
      ['user', user],
    ] as const) {
      const entry = this.entryOf(kind, row, now);
      if (entry) budgeted.push([entry, Number(row.budget_quota)]);
    }
    if (member) budgeted.push(...this.memberEntries(member, now));
    if (budgeted.length === 0 && !member) return undefined;
    for (const [entry, budget] of budgeted) {
      if (entry.spent + entry.held + reservation.amount > budget) return this.refusal(entry, budget, reservation.amount);
    }
    const entries = budgeted.map(([entry]) => entry);
    for (const entry of entries) entry.held += reservation.amount;
    const payer = member ? { organizationId: Number(member.organization_id), userId: Number(member.user_id) } : undefined;
    this.holds.set(reservation, { entries, amount: reservation.amount, ...(payer ? { member: payer } : {}) });
    return undefined;
  }

  /** The member's capped entries with their caps: the lifetime cap's and the period's, each when set. */
  private memberEntries(member: MemberCapRow, now: number): Array<[Entry, number]> {
    const entries: Array<[Entry, number]> = [];
    // the membership's own: a member removed and added again starts from the new row's spend, not this node's memory
    const id = `${Number(member.organization_id)}:${Number(member.user_id)}:${Number(member.created_time)}`;
    const cap = Number(member.cap_quota);
    if (cap > 0) {
      const key = `memberLifetime:${id}`;
      let entry = this.entries.get(key);
      if (!entry) {
        entry = { kind: 'memberLifetime', period: '', start: 0, end: Infinity, spent: 0, held: 0 };
        this.entries.set(key, entry);
      }
      // as for a period's spend: the row (cached, or written by another node) and this node's charges, the larger
      entry.spent = Math.max(entry.spent, Number(member.spent_quota));
      entries.push([entry, cap]);
    }
    const period = this.entryOf(
      'member',
      {
        id,
        budget_period: member.cap_period,
        budget_quota: member.cap_period_quota,
        period_spent: member.period_spent,
        period_start: member.period_start,
      },
      now,
    );
    if (period) entries.push([period, Number(member.cap_period_quota)]);
    return entries;
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
    const written: SettlementBudget = hold.member ? { member: { ...hold.member } } : {};
    for (const entry of hold.entries) {
      this.roll(entry, now);
      entry.spent += charge;
      if (entry.kind === 'token') written.tokenStart = entry.start;
      else if (entry.kind === 'user') written.userStart = entry.start;
      else if (entry.kind === 'member') written.member!.start = entry.start;
    }
    return written;
  }

  /**
   * A task's hold (billing/taskLedger.ts) counts as spent from its submission,
   * as the database writes it with the task; what the write adds to. `amend`
   * moves the spend by the task's charge less its hold, in the same periods.
   */
  spendTask(reservation: Reservation): { budget: SettlementBudget | undefined; amend: (delta: number) => void } {
    const hold = this.holds.get(reservation);
    const budget = this.settle(reservation, reservation.amount);
    const periods = hold?.entries.map((entry) => [entry, entry.start] as const) ?? [];
    const amend = (delta: number) => {
      for (const [entry, start] of periods) if (entry.start === start) entry.spent = Math.max(0, entry.spent + delta);
    };
    return { budget, amend };
  }

  /** The budget's entry for this period, made or brought up to date from the row at hand; undefined without a budget. */
  private entryOf(kind: Entry['kind'], row: PeriodRow, now: number): Entry | undefined {
    const period = row.budget_period as BudgetPeriod;
    if (!period) return undefined;
    const key = `${kind}:${typeof row.id === 'string' ? row.id : Number(row.id)}`;
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
    if (entry.period === '' || (now < entry.end * 1000 && now >= entry.start * 1000)) return;
    const { start, end } = budgetPeriodAt(entry.period, now, this.zone);
    if (start === entry.start) return;
    entry.start = start;
    entry.end = end;
    entry.spent = 0;
  }

  /** Like a quota refusal (429, insufficient_quota), saying how much is spent and when the budget resets. */
  private refusal(entry: Entry, budget: number, amount: number): RelayError {
    if (entry.kind === 'member' || entry.kind === 'memberLifetime') return this.capRefusal(entry, budget, amount);
    const whose = entry.kind === 'token' ? 'the API key' : 'your account';
    const resets = `${new Date(entry.end * 1000).toISOString()} (${localTimeText(entry.end, this.zone)})`;
    // "$0.0005 of $0.002 spent", or "250 of 1000 quota spent": the display currency when the operator shows it
    const unit = this.unit();
    const spent = `${bareAmount(entry.spent, unit)} of ${amountText(budget, unit)} spent this period`;
    const held = entry.held > 0 ? `, ${bareAmount(entry.held, unit)} held by requests in flight` : '';
    const error = relayError(
      429,
      `this request would exceed the ${PERIOD_WORDS[entry.period as Period]} budget of ${whose}: ${spent}${held}; the budget resets at ${resets}`,
      'budget_exceeded',
      'insufficient_quota',
    );
    // requests in flight may give some back; otherwise nothing changes before the reset
    error.retryAfter = entry.held > 0 ? HELD_RETRY_AFTER_SECONDS : Math.max(1, entry.end - Math.floor(this.clock() / 1000));
    return error;
  }

  /** A member's cap in an organisation: which cap, what is spent, held and left (in the money unit), what the request holds, when a period's resets. */
  private capRefusal(entry: Entry, cap: number, amount: number): RelayError {
    const unit = this.unit();
    const which = entry.period === '' ? 'lifetime' : PERIOD_WORDS[entry.period];
    const spent = `${bareAmount(entry.spent, unit)} of ${amountText(cap, unit)} spent${entry.period === '' ? '' : ' this period'}`;
    const held = entry.held > 0 ? `, ${bareAmount(entry.held, unit)} held by requests in flight` : '';
    const left = `${amountText(Math.max(0, cap - entry.spent - entry.held), unit)} left, this request holds ${amountText(amount, unit)}`;
    const resets =
      entry.period === '' ? '' : `; the cap resets at ${new Date(entry.end * 1000).toISOString()} (${localTimeText(entry.end, this.zone)})`;
    const error = relayError(
      429,
      `this request would exceed your ${which} spending cap in this organization: ${spent}${held}, ${left}${resets}`,
      'member_cap_exceeded',
      'insufficient_quota',
    );
    if (entry.held > 0) error.retryAfter = HELD_RETRY_AFTER_SECONDS;
    else if (entry.period !== '') error.retryAfter = Math.max(1, entry.end - Math.floor(this.clock() / 1000));
    return error;
  }
}
