// The states the two-factor panel (TwoFactorPanel.tsx) shows: the recovery
// codes just issued, sign-in on (with the form that turns it off), setting it
// up (QR code, secret as text, the confirming code), and off. Each view only
// shows what it is given and calls back; the state lives in the panel.
import { Alert, Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import type { FormEvent, ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import type { TwoFactorEnrolment, TwoFactorStatus } from '../../common/records';

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

/** The code field shared by the views that ask for one, and whether a request runs. */
export interface CodeEntry {
  code: string;
  setCode: (code: string) => void;
  busy: boolean;
}

/** The ten recovery codes, shown once: copy them, then say they were saved. */
export function RecoveryCodesView({
  recoveryCodes,
  onCopy,
  onSaved,
}: {
  recoveryCodes: string[];
  onCopy: () => void;
  onSaved: () => void;
}) {
  const translate = useTranslate();
  return (
    <Stack spacing={2} data-testid="two-factor-recovery-codes">
      <Alert severity="warning">{translate('app.two_factor.codes_once')}</Alert>
      <Box component="ol" sx={{ m: 0, pl: 4, maxWidth: 400, columns: { xs: 1, sm: 2 }, fontFamily: 'monospace', fontSize: '1rem' }}>
        {recoveryCodes.map((recoveryCode) => (
          <li key={recoveryCode}>{recoveryCode}</li>
        ))}
      </Box>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
        <Button variant="outlined" onClick={onCopy}>
          {translate('app.two_factor.copy_codes')}
        </Button>
        <Button variant="contained" disableElevation onClick={onSaved}>
          {translate('app.two_factor.codes_saved')}
        </Button>
      </Stack>
    </Stack>
  );
}

/** Sign-in with a code is on: recovery codes left, and turning it off with a code unless it is required. */
export function TwoFactorOnView({
  status,
  entry,
  onDisable,
}: {
  status: TwoFactorStatus;
  entry: CodeEntry;
  onDisable: (event: FormEvent) => void;
}) {
  const translate = useTranslate();
  const { code, setCode, busy } = entry;
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
        <CodeForm name="two-factor-disable-code" label="app.two_factor.code_or_recovery" code={code} setCode={setCode} onSubmit={onDisable}>
          <Button type="submit" variant="outlined" color="error" disabled={busy || !code.trim()}>
            {translate('app.two_factor.disable')}
          </Button>
        </CodeForm>
      )}
    </Stack>
  );
}

interface EnrolmentViewProps {
  enrolment: TwoFactorEnrolment;
  entry: CodeEntry;
  onConfirm: (event: FormEvent) => void;
  onCancel: () => void;
}

/** Setting it up: the QR code, the secret as text, and the first code from the app to turn it on. */
export function EnrolmentView({ enrolment, entry, onConfirm, onCancel }: EnrolmentViewProps) {
  const translate = useTranslate();
  const { code, setCode, busy } = entry;
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
      <CodeForm name="two-factor-confirm-code" label="app.two_factor.code" code={code} setCode={setCode} onSubmit={onConfirm} numeric>
        <Button type="submit" variant="contained" disableElevation disabled={busy || !code.trim()}>
          {translate('app.two_factor.confirm')}
        </Button>
        <Button onClick={onCancel}>{translate('ra.action.cancel')}</Button>
      </CodeForm>
    </Stack>
  );
}

/** Sign-in with a code is off: the notice when the site requires it, and the button that starts setting it up. */
export function TwoFactorOffView({ required, busy, onStart }: { required: boolean; busy: boolean; onStart: () => void }) {
  const translate = useTranslate();
  return (
    <Stack spacing={2} sx={{ alignItems: 'flex-start' }}>
      {required && <Alert severity="warning">{translate('app.two_factor.required_notice')}</Alert>}
      <Chip label={translate('app.two_factor.off')} />
      <Button variant="contained" disableElevation onClick={onStart} disabled={busy}>
        {translate('app.two_factor.set_up')}
      </Button>
    </Stack>
  );
}
