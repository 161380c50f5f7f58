// One settings field per option kind: a switch for toggles (saved at once;
// switching password login off asks first), a password-style field for
// secrets that only says whether one is stored, text areas for JSON and
// content, number fields with the spec's steps, and the whitelist editor.
import { Chip, FormControlLabel, InputAdornment, Switch, TextField, Tooltip } from '@mui/material';
import { useEffect, useState } from 'react';
import { Confirm, useTranslate } from 'react-admin';
import { OPTION_SPECS, type OptionKey } from '../../common/options';
import { useStatus } from '../layout/status';
import { dollarsToQuota, quotaToDollars, quotaUnit } from '../quota';
import { FIELD_HINTS, optionLabel } from './sections';
import type { OptionForm } from './useOptionForm';
import { WhitelistEditor } from './WhitelistEditor';

/** Options that hold an amount of quota. */
const QUOTA_OPTIONS: OptionKey[] = ['QuotaForNewUser', 'QuotaForInviter', 'QuotaForInvitee', 'QuotaRemindThreshold', 'PreConsumedQuota'];

/** Toggles whose switching off needs a confirmation first: turning password login off can leave nobody able to sign in. */
const CONFIRM_BEFORE_OFF: OptionKey[] = ['PasswordLoginEnabled'];

export function OptionToggle({ form, optionKey }: { form: OptionForm; optionKey: OptionKey }) {
  const translate = useTranslate();
  const [confirming, setConfirming] = useState(false);
  const on = form.stored(optionKey) === 'true';
  const change = (next: boolean) => {
    if (!next && CONFIRM_BEFORE_OFF.includes(optionKey)) setConfirming(true);
    else void form.saveToggle(optionKey, next);
  };
  return (
    <>
      <FormControlLabel
        control={
          <Switch checked={on} onChange={(event) => change(event.target.checked)} disabled={!form.canWrite(optionKey)} name={optionKey} />
        }
        label={optionLabel(translate, optionKey)}
        sx={{ mr: 3, minWidth: { sm: 260 } }}
      />
      <Confirm
        isOpen={confirming}
        title="settings.confirm_password_off.title"
        content="settings.confirm_password_off.content"
        confirm="settings.confirm_password_off.confirm"
        onConfirm={() => {
          setConfirming(false);
          void form.saveToggle(optionKey, false);
        }}
        onClose={() => setConfirming(false)}
      />
    </>
  );
}

export function OptionInput({ form, optionKey }: { form: OptionForm; optionKey: OptionKey }) {
  const translate = useTranslate();
  const kind = OPTION_SPECS[optionKey].kind;
  const hint = FIELD_HINTS[optionKey] ?? {};
  const writable = form.canWrite(optionKey);
  const help = translate(`settings.help.${optionKey}`, { _: '' });
  const unit = quotaUnit(useStatus().status);
  if (kind === 'list') return <WhitelistEditor form={form} optionKey={optionKey} />;

  const common = {
    name: optionKey,
    label: optionLabel(translate, optionKey),
    value: form.value(optionKey),
    onChange: (event: React.ChangeEvent<HTMLInputElement>) => form.setDraft(optionKey, event.target.value),
    disabled: !writable,
    fullWidth: true,
    size: 'small' as const,
    placeholder: hint.placeholder,
  };

  if (kind === 'secret') {
    const set = form.secretSet(optionKey);
    return (
      <TextField
        {...common}
        type="password"
        autoComplete="new-password"
        placeholder={translate(set ? 'settings.secret.keep' : 'settings.secret.empty')}
        helperText={help || undefined}
        slotProps={{
          inputLabel: { shrink: true },
          input: {
            endAdornment: (
              <Tooltip title={translate(set ? 'settings.secret.set_help' : 'settings.secret.unset_help')}>
                <Chip
                  size="small"
                  label={translate(set ? 'settings.secret.set' : 'settings.secret.unset')}
                  color={set ? 'success' : 'default'}
                  variant="outlined"
                />
              </Tooltip>
            ),
          },
        }}
      />
    );
  }
  if (kind === 'number' && QUOTA_OPTIONS.includes(optionKey) && unit.inCurrency) {
    return <DollarOptionInput form={form} optionKey={optionKey} common={common} help={help} perUnit={unit.perUnit} />;
  }
  if (kind === 'number') {
    return (
      <TextField
        {...common}
        type="number"
        helperText={help || undefined}
        slotProps={{ htmlInput: { min: 0, step: hint.step ?? 1 }, inputLabel: { shrink: true } }}
      />
    );
  }
  return (
    <TextField
      {...common}
      multiline={hint.rows !== undefined}
      minRows={hint.rows}
      maxRows={hint.rows ? hint.rows * 2 : undefined}
      helperText={(!writable && optionKey === 'TopUpLink' ? translate('settings.top_up_root_only') : help) || undefined}
      slotProps={{
        inputLabel: { shrink: true },
        htmlInput: hint.monospace
          ? { style: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13 }, spellCheck: false }
          : undefined,
      }}
    />
  );
}

/** What a quota amount reads as in dollars ('' for an empty or unreadable one). */
const asDollars = (quota: string, perUnit: number) =>
  quota === '' || Number.isNaN(Number(quota)) ? '' : String(quotaToDollars(Number(quota), perUnit));

/**
 * A quota option typed in dollars (the console's unit when the status says
 * display_in_currency), saved as whole quota, the stored quota beside it. The
 * typed text is kept as typed ("0.", "1.50") and follows the stored value
 * when that changes from outside (a save, a reset).
 */
function DollarOptionInput({
  form,
  optionKey,
  common,
  help,
  perUnit,
}: {
  form: OptionForm;
  optionKey: OptionKey;
  common: { name: string; label: string; value: string; disabled: boolean; fullWidth: boolean; size: 'small'; placeholder?: string };
  help: string;
  perUnit: number;
}) {
  const translate = useTranslate();
  const quota = common.value;
  const [typed, setTyped] = useState(() => asDollars(quota, perUnit));
  useEffect(() => {
    setTyped((current) =>
      current !== '' && dollarsToQuota(Number(current), perUnit) === Number(quota) ? current : asDollars(quota, perUnit),
    );
  }, [quota, perUnit]);
  const change = (text: string) => {
    setTyped(text);
    const dollars = Number(text);
    form.setDraft(optionKey, text.trim() === '' || Number.isNaN(dollars) ? text : String(dollarsToQuota(dollars, perUnit)));
  };
  const raw = quota === '' ? '' : translate('app.quota_input.raw', { quota, per_unit: perUnit });
  return (
    <TextField
      {...common}
      value={typed}
      onChange={(event) => change(event.target.value)}
      type="number"
      helperText={[raw, help].filter(Boolean).join(' · ') || undefined}
      slotProps={{
        htmlInput: { min: 0, step: 'any' },
        inputLabel: { shrink: true },
        input: { startAdornment: <InputAdornment position="start">$</InputAdornment> },
      }}
    />
  );
}
