// A key's or user's budget as the console API shows it (common/budgets.ts).
import type { Selectable } from 'kysely';
import { budgetUsageAt, isBudgetPeriod, type BudgetFields, type BudgetUsage } from '../../common/budgets';
import type { TokensTable } from '../db/schema/tokens';
import type { UsersTable } from '../db/schema/users';

type BudgetColumn = 'budget_period' | 'budget_quota' | 'period_spent' | 'period_start';
/** The budget columns of a user's row or a key's (the two tables have the same four). */
type BudgetColumns = Pick<Selectable<UsersTable>, BudgetColumn> | Pick<Selectable<TokensTable>, BudgetColumn>;

/** The budget fields of a record; with the operator's time zone, also the spend this period and when it resets. */
export function budgetOf(row: BudgetColumns, zone?: string, now = Date.now()): BudgetFields & { budget_usage?: BudgetUsage } {
  const period = isBudgetPeriod(row.budget_period) ? row.budget_period : '';
  const fields: BudgetFields & { budget_usage?: BudgetUsage } = {
    budget_period: period,
    budget_quota: period ? Number(row.budget_quota ?? 0) : 0,
  };
  if (zone && period)
    fields.budget_usage = budgetUsageAt(
      { budget_period: period, period_spent: Number(row.period_spent ?? 0), period_start: Number(row.period_start ?? 0) },
      now,
      zone,
    );
  return fields;
}
