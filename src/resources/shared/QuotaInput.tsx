// A quota input in the unit the console shows quota in: dollars when the
// status says display_in_currency (the stored quota beside it as helper
// text), whole quota otherwise. The form value is always whole quota, so
// create, edit and their transforms never see dollars.
import { InputAdornment } from '@mui/material';
import { useCallback } from 'react';
import { NumberInput, useTranslate, type Validator } from 'react-admin';
import { useWatch } from 'react-hook-form';
import { useStatus } from '../../layout/status';
import { dollarsToQuota, quotaToDollars, quotaUnit } from '../../quota';

export interface QuotaInputProps {
  source: string;
  label?: string;
  resource?: string;
  disabled?: boolean;
  validate?: Validator | Validator[];
  sx?: object;
  /** A sentence under the field (in dollars, before the stored quota). */
  help?: string;
}

/** Whole quota of at least `min`, with the spec's message. */
export const wholeQuota =
  (min: number, message: string): Validator =>
  (value: unknown) => {
    if (value === undefined || value === null || value === '') return undefined;
    return Number.isSafeInteger(Number(value)) && Number(value) >= min ? undefined : message;
  };

/**
 * No native `min`: the browser would block the submit with its own bubble
 * before the validators' inline messages could show.
 */
export function QuotaInput({ source, label, resource, disabled, validate, sx, help }: QuotaInputProps) {
  const translate = useTranslate();
  const { status } = useStatus();
  const { inCurrency, perUnit } = quotaUnit(status);
  const quota: unknown = useWatch({ name: source });
  const format = useCallback(
    (value: unknown) =>
      value === undefined || value === null || value === '' || Number.isNaN(Number(value))
        ? ''
        : String(quotaToDollars(Number(value), perUnit)),
    [perUnit],
  );
  const parse = useCallback(
    (value: unknown) =>
      value === '' || value === null || value === undefined || Number.isNaN(Number(value)) ? null : dollarsToQuota(Number(value), perUnit),
    [perUnit],
  );
  if (!inCurrency) {
    return (
      <NumberInput
        source={source}
        label={label}
        resource={resource}
        disabled={disabled}
        validate={validate}
        step={1}
        helperText={help}
        sx={sx}
        fullWidth
      />
    );
  }
  return (
    <NumberInput
      source={source}
      label={label}
      resource={resource}
      disabled={disabled}
      validate={validate}
      format={format}
      parse={parse}
      // any amount down to one quota: a browser step of 0.01 would call $0.000002 invalid
      step="any"
      helperText={[help ? translate(help) : '', translate('app.quota_input.raw', { quota: quota ?? 0, per_unit: perUnit })]
        .filter(Boolean)
        .join(' ')}
      slotProps={{ input: { startAdornment: <InputAdornment position="start">$</InputAdornment> } }}
      sx={sx}
      fullWidth
    />
  );
}
