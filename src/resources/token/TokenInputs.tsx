// The token form shared by create and edit: name, quota (disabled when
// unlimited), expiry with presets (-1 = never), optional model and IP allowlists,
// per-minute limits lower than the account's (empty: the account's apply), and
// a budget per day, week or month.
import { Box, Button, Stack, Typography } from '@mui/material';
import { NumberInput, required, TextInput, useTranslate } from 'react-admin';
import { useFormContext, useWatch } from 'react-hook-form';
import { BudgetInputs, budgetValue } from '../shared/BudgetField';
import { QuotaInput, wholeQuota } from '../shared/QuotaInput';
import { rateLimitValue } from '../shared/RateLimitsField';
import { SwitchInput } from '../shared/SwitchInput';
import { textOf } from '../shared/textOf';
import { formatTimestamp } from '../shared/TimestampField';

const PRESETS: Array<{ label: string; seconds: number | null }> = [
  { label: 'app.token.never', seconds: null },
  { label: 'app.token.one_month', seconds: 30 * 24 * 3600 },
  { label: 'app.token.one_day', seconds: 24 * 3600 },
  { label: 'app.token.one_hour', seconds: 3600 },
  { label: 'app.token.one_minute', seconds: 60 },
];

/** The expiry field shows a local date-time; the wire carries epoch seconds or -1. */
export function parseExpiry(text: string): number | 'invalid' {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === '-1') return -1;
  const parsed = Date.parse(trimmed.replace(' ', 'T'));
  return Number.isNaN(parsed) ? 'invalid' : Math.floor(parsed / 1000);
}

export function expiryText(seconds: number | undefined): string {
  return seconds === undefined || seconds === -1 ? '' : formatTimestamp(seconds);
}

function ExpiryPresets() {
  const translate = useTranslate();
  const { setValue } = useFormContext();
  return (
    <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', rowGap: 1, mb: 2 }}>
      {PRESETS.map((preset) => (
        <Button
          key={preset.label}
          size="small"
          variant="outlined"
          onClick={() =>
            setValue('expiry_text', preset.seconds === null ? '' : formatTimestamp(Math.floor(Date.now() / 1000) + preset.seconds), {
              shouldDirty: true,
            })
          }
        >
          {translate(preset.label)}
        </Button>
      ))}
    </Stack>
  );
}

/** The expiry field's own error, shown under it as the user types ('expiry format error'). */
export const validExpiry = (value: unknown) => (parseExpiry(textOf(value)) === 'invalid' ? 'app.token.expiry_format_error' : undefined);

const quotaValidators = [wholeQuota(0, 'app.validation.quota_whole')];

/** The form-level check, kept for callers that validate values outside the inputs. */
export function validateTokenForm(values: Record<string, unknown>) {
  const error = validExpiry(values.expiry_text);
  return error ? { expiry_text: error } : {};
}

export function TokenInputs() {
  const translate = useTranslate();
  const unlimited: unknown = useWatch({ name: 'unlimited_quota' });
  return (
    <Box sx={{ width: '100%', maxWidth: 560 }}>
      <TextInput source="name" validate={required('app.validation.name_required')} fullWidth />
      <TextInput source="expiry_text" label="app.token.expiry" helperText="app.token.expiry_help" validate={validExpiry} fullWidth />
      <ExpiryPresets />
      <QuotaInput source="remain_quota" disabled={Boolean(unlimited)} validate={quotaValidators} />
      <SwitchInput source="unlimited_quota" />
      <Typography variant="subtitle2" component="h2" sx={{ mt: 1, mb: 1 }}>
        {translate('app.token.restrictions')}
      </Typography>
      <TextInput source="models" label="app.token.models" helperText="app.token.models_help" fullWidth />
      <TextInput source="allowed_ips" label="app.token.allowed_ips" helperText="app.token.allowed_ips_help" fullWidth />
      <NumberInput
        source="concurrency_limit"
        label="app.token.concurrency_limit"
        helperText="app.token.concurrency_limit_help"
        step={1}
        min={-1}
        fullWidth
      />
      <NumberInput source="rpm_limit" label="app.token.rpm_limit" helperText="app.token.rate_limit_help" step={1} min={1} fullWidth />
      <NumberInput source="tpm_limit" label="app.token.tpm_limit" helperText="app.token.rate_limit_help" step={1} min={1} fullWidth />
      <BudgetInputs help="app.token.budget_help" />
    </Box>
  );
}

/** Form values → the API's body. */
export function tokenTransform(values: Record<string, unknown>) {
  const expiry = parseExpiry(textOf(values.expiry_text));
  return {
    id: values.id,
    name: textOf(values.name).trim(),
    remain_quota: Number.parseInt(textOf(values.remain_quota ?? 0), 10) || 0,
    unlimited_quota: Boolean(values.unlimited_quota),
    expired_time: expiry === 'invalid' ? -1 : expiry,
    models: textOf(values.models),
    allowed_ips: textOf(values.allowed_ips),
    concurrency_limit: Number.parseInt(textOf(values.concurrency_limit ?? 0), 10) || 0,
    rpm_limit: rateLimitValue(values.rpm_limit),
    tpm_limit: rateLimitValue(values.tpm_limit),
    ...budgetValue(values),
    // the create form's "Spends": an organisation's id, or nothing for the caller's own money
    ...(Number(values.organization_id) > 0 ? { organization_id: Number(values.organization_id) } : {}),
  };
}
