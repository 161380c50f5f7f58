// Two-factor sign-in for the signed-in account: set it up (QR code and the
// secret as text, then a code from the app to turn it on), the ten recovery
// codes shown once, and turning it off with a code. The secret and the
// recovery codes live only in this component's state: the server never sends
// them again.
import { Alert, Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import { useCallback, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import type { TwoFactorEnrolment, TwoFactorStatus } from '../../common/records';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { copyText } from '../resources/shared/clipboard';

interface CodeFormProps {
  name: string;
  label: string;
  code: string;
  setCode: (code: string) => void;
  onSubmit: (event: FormEvent) => void;
  /** A six-digit TOTP code only (no recovery code). */
  numeric?: boolean;
  /** The form's buttons. */
  children: ReactNode;
}

/** One code field and its buttons, side by side from the sm breakpoint. */
function CodeForm({ name, label, code, setCode, onSubmit, numeric, children }: CodeFormProps) {
  const translate = useTranslate();
  return (
    <Box component="form" onSubmit={onSubmit} noValidate>
      <Stack
        direction="row"
        spacing={1}
        useFlexGap
        sx={{ flexWrap: 'wrap', alignItems: 'center', '& .MuiButton-root': { whiteSpace: 'nowrap' } }}
      >
        <TextField
          size="small"
          margin="none"
          name={name}
          label={translate(label)}
          value={code}
          onChange={(event) => setCode(event.target.value)}
          autoComplete="one-time-code"
          slotProps={{
            htmlInput: numeric ? { inputMode: 'numeric', maxLength: 8 } : { maxLength: 16, autoCapitalize: 'none', spellCheck: false },
          }}
          sx={{ flex: '1 1 200px', maxWidth: 300 }}
        />
        {children}
      </Stack>
    </Box>
  );
}

/** `onConfirmed`: two-factor sign-in just turned on; `onEnabled`: its recovery codes were put away too. */
export function TwoFactorPanel({ onConfirmed, onEnabled }: { onConfirmed?: () => void; onEnabled?: () => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const [status, setStatus] = useState<TwoFactorStatus | null>(null);
  const [loadError, setLoadError] = useState('');
  const [enrolment, setEnrolment] = useState<TwoFactorEnrolment | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setStatus(await dataProvider.twoFactorStatus());
      setLoadError('');
    } catch (error) {
      setLoadError(errorMessage(error));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    try {
      await action();
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(false);
    }
  };

  const start = () =>
    run(async () => {
      setEnrolment(await dataProvider.twoFactorEnrol());
      setCode('');
    });

  const confirm = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    return run(async () => {
      setRecoveryCodes(await dataProvider.twoFactorConfirm(code.trim()));
      setEnrolment(null);
      setCode('');
      onConfirmed?.();
      notice('app.two_factor.enabled_notice', 'success');
      await load();
    });
  };

  const disable = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    return run(async () => {
      await dataProvider.twoFactorDisable(code.trim());
      setCode('');
      notice('app.two_factor.disabled_notice', 'success');
      await load();
    });
  };

  const copyCodes = async () => {
    const text = (recoveryCodes ?? []).join('\n');
    if (await copyText(text)) notice('app.two_factor.codes_copied', 'success');
    else notice('app.errors.copy_manually', 'warning', { value: text });
  };

  if (loadError) {
    return (
      <Alert
        severity="error"
        action={
          <Button color="inherit" size="small" onClick={() => void load()}>
            {translate('ra.action.refresh')}
          </Button>
        }
      >
        {translate(loadError, { _: loadError })}
      </Alert>
    );
  }
  if (!status) return <Typography color="text.secondary">{translate('ra.page.loading')}</Typography>;

  if (recoveryCodes) {
    return (
      <Stack spacing={2} data-testid="two-factor-recovery-codes">
        <Alert severity="warning">{translate('app.two_factor.codes_once')}</Alert>
        <Box component="ol" sx={{ m: 0, pl: 4, maxWidth: 400, columns: { xs: 1, sm: 2 }, fontFamily: 'monospace', fontSize: '1rem' }}>
          {recoveryCodes.map((recoveryCode) => (
            <li key={recoveryCode}>{recoveryCode}</li>
          ))}
        </Box>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
          <Button variant="outlined" onClick={() => void copyCodes()}>
            {translate('app.two_factor.copy_codes')}
          </Button>
          <Button
            variant="contained"
            disableElevation
            onClick={() => {
              setRecoveryCodes(null);
              onEnabled?.();
            }}
          >
            {translate('app.two_factor.codes_saved')}
          </Button>
        </Stack>
      </Stack>
    );
  }

  if (status.enabled) {
    return (
      <Stack spacing={2}>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap', gap: 1 }}>
          <Chip color="success" label={translate('app.two_factor.on')} />
          <Typography variant="body2" color="text.secondary">
            {translate('app.two_factor.codes_left', { count: status.recovery_codes_left, smart_count: status.recovery_codes_left })}
          </Typography>
        </Stack>
        {status.required ? (
          <Typography variant="body2" color="text.secondary">
            {translate('app.two_factor.required_cannot_disable')}
          </Typography>
        ) : (
          <CodeForm
            name="two-factor-disable-code"
            label="app.two_factor.code_or_recovery"
            code={code}
            setCode={setCode}
            onSubmit={(event) => void disable(event)}
          >
            <Button type="submit" variant="outlined" color="error" disabled={busy || !code.trim()}>
              {translate('app.two_factor.disable')}
            </Button>
          </CodeForm>
        )}
      </Stack>
    );
  }

  if (enrolment) {
    return (
      <Stack spacing={2} data-testid="two-factor-enrolment">
        <Typography variant="body2">{translate('app.two_factor.scan')}</Typography>
        <Box
          component="img"
          src={enrolment.qr_code}
          alt={translate('app.two_factor.qr_alt')}
          sx={{
            width: 200,
            height: 200,
            maxWidth: '100%',
            bgcolor: '#fff',
            p: 1,
            borderRadius: 1,
            border: 1,
            borderColor: 'divider',
            alignSelf: { xs: 'center', sm: 'flex-start' },
          }}
        />
        <Box>
          <Typography variant="body2" color="text.secondary">
            {translate('app.two_factor.secret_text')}
          </Typography>
          <Typography
            data-testid="two-factor-secret"
            sx={{ fontFamily: 'monospace', fontSize: '1rem', overflowWrap: 'anywhere', letterSpacing: 1 }}
          >
            {enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}
          </Typography>
        </Box>
        <CodeForm
          name="two-factor-confirm-code"
          label="app.two_factor.code"
          code={code}
          setCode={setCode}
          onSubmit={(event) => void confirm(event)}
          numeric
        >
          <Button type="submit" variant="contained" disableElevation disabled={busy || !code.trim()}>
            {translate('app.two_factor.confirm')}
          </Button>
          <Button onClick={() => setEnrolment(null)}>{translate('ra.action.cancel')}</Button>
        </CodeForm>
      </Stack>
    );
  }

  return (
    <Stack spacing={2} sx={{ alignItems: 'flex-start' }}>
      {status.required && <Alert severity="warning">{translate('app.two_factor.required_notice')}</Alert>}
      <Chip label={translate('app.two_factor.off')} />
      <Button variant="contained" disableElevation onClick={() => void start()} disabled={busy}>
        {translate('app.two_factor.set_up')}
      </Button>
    </Stack>
  );
}
