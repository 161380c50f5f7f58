// Budgets that reset (common/budgets.ts) in forms and lists: a period select
// and an amount in the console's quota unit, the form values as the wire
// carries them, and "spent this period / budget" for a list.
import { Box, MenuItem, TextField, Tooltip } from '@mui/material';
import { useInput, useRecordContext, useTranslate, type Validator } from 'react-admin';
import { useWatch } from 'react-hook-form';
import { BUDGET_PERIODS, isBudgetPeriod, type BudgetFields, type BudgetUsage } from '../../../common/budgets';
import { useStatus } from '../../layout/status';
import { formatQuota } from '../../quota';
import { QuotaInput } from './QuotaInput';
import { textOf } from './textOf';
import { formatTimestamp } from './TimestampField';

/** With a period, a whole amount above 0 (the server's rule, said before saving). */
const budgetAmount: Validator = (value: unknown, values: Record<string, unknown>) => {
  if (!values.budget_period) return undefined;
  return Number.isSafeInteger(Number(value)) && Number(value) > 0 && textOf(value).trim() !== '' ? undefined : 'app.budget.amount_required';
};

/**
 * The period: "None" and the three periods, each once. Not react-admin's
 * SelectInput: it adds an empty item of its own (named "Clear value" to a
 * screen reader) beside the choices, so a '' choice showed "None" twice.
 */
function PeriodSelect({ help }: { help: string }) {
  const translate = useTranslate();
  const { id, field } = useInput({ source: 'budget_period', defaultValue: '' });
  return (
    <TextField
      select
      id={id}
      name={field.name}
      inputRef={field.ref}
      value={isBudgetPeriod(field.value) ? field.value : ''}
      onChange={(event) => field.onChange(event.target.value)}
      onBlur={field.onBlur}
      label={translate('app.budget.period')}
      helperText={translate(help)}
      slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
      fullWidth
    >
      <MenuItem value="">{translate('app.budget.none')}</MenuItem>
      {BUDGET_PERIODS.map((period) => (
        <MenuItem key={period} value={period}>
          {translate(`app.budget.${period}`)}
        </MenuItem>
      ))}
    </TextField>
  );
}

/** The period select and the amount (ignored without a period), with what was spent this period when the record has a budget. */
export function BudgetInputs({ help }: { help: string }) {
  const translate = useTranslate();
  const record = useRecordContext();
  const { status } = useStatus();
  const period: unknown = useWatch({ name: 'budget_period' });
  const usage = record?.budget_usage as BudgetUsage | undefined;
  return (
    <Box data-testid="budget-inputs">
      <PeriodSelect help={help} />
      {/* not disabled without a period: a disabled field's grey helper text fails WCAG contrast; the amount is only sent with a period */}
      <QuotaInput source="budget_quota" label="app.budget.amount" validate={budgetAmount} />
      {usage && record?.budget_period === period ? (
        <Box component="p" sx={{ mt: 0, color: 'text.secondary', fontSize: '0.875rem' }} data-testid="budget-spent">
          {translate('app.budget.spent_help', { spent: formatQuota(usage.spent, status), resets: formatTimestamp(usage.resets_at) })}
        </Box>
      ) : null}
    </Box>
  );
}

/** Form values → the API's budget fields: no period sends no amount. */
export function budgetValue(values: Record<string, unknown>): BudgetFields {
  const period = isBudgetPeriod(values.budget_period) ? values.budget_period : '';
  return { budget_period: period, budget_quota: period ? Number.parseInt(textOf(values.budget_quota ?? 0), 10) || 0 : 0 };
}

/** "$1.20 / $5.00 a day" (spent this period / budget), its reset in the tooltip; "None" without a budget. */
export function BudgetField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { status } = useStatus();
  const period = record?.budget_period as string | undefined;
  const usage = record?.budget_usage as BudgetUsage | undefined;
  if (!period || !usage) return <span data-testid="budget">{translate('app.budget.none')}</span>;
  const budget = Number(record?.budget_quota ?? 0);
  return (
    <Tooltip title={translate('app.budget.resets', { time: formatTimestamp(usage.resets_at) })}>
      <Box component="span" data-testid="budget" sx={usage.spent >= budget ? { color: 'error.main', fontWeight: 600 } : undefined}>
        {translate(`app.budget.usage_${period}`, { spent: formatQuota(usage.spent, status), budget: formatQuota(budget, status) })}
      </Box>
    </Tooltip>
  );
}
