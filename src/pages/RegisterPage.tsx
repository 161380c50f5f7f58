// /register: username and password twice; e-mail with a code when the server
// requires verification; the bot check when it is on. An `aff` invite code in
// the query is remembered locally and sent with the registration. The form's
// state and requests are useRegisterForm; the e-mail fields EmailCodeFields.
import { Alert, Box, Button, Link, Stack, TextField, Typography } from '@mui/material';
import { useEffect, useState, type FormEvent } from 'react';
import { useTranslate } from 'react-admin';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router-dom';
import { PASSWORD_MIN } from '../../common/validation';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { AuthCard } from './AuthCard';
import { errorMessage } from '../dataProvider/errorMessage';
import { Turnstile } from '../layout/Turnstile';
import { useCooldown } from '../layout/useCooldown';

export const AFF_STORAGE_KEY = 'aff';

type RegisterFields = { username: string; password: string; password2: string; email: string; verification_code: string };

/** The registration form's fields, the bot check's token, and its two requests: send the e-mail code, register. */
function useRegisterForm() {
  const notice = useNotice();
  const navigate = useNavigate();
  const { status } = useStatus();
  const [searchParams] = useSearchParams();
  const [form, setForm] = useState<RegisterFields>({ username: '', password: '', password2: '', email: '', verification_code: '' });
  const [turnstileToken, setTurnstileToken] = useState('');
  const [busy, setBusy] = useState(false);
  const cooldown = useCooldown(30);

  useEffect(() => {
    const aff = searchParams.get('aff');
    if (aff) localStorage.setItem(AFF_STORAGE_KEY, aff);
  }, [searchParams]);

  const set = (field: keyof typeof form) => (event: { target: { value: string } }) =>
    setForm((previous) => ({ ...previous, [field]: event.target.value }));
  const botCheckPending = Boolean(status?.turnstile_check) && !turnstileToken;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!form.username || !form.password) return;
    if (form.password.length < PASSWORD_MIN) return notice('app.validation.password_short', 'info');
    if (form.password !== form.password2) return notice('app.validation.password_mismatch', 'info');
    if (botCheckPending) return notice('app.validation.turnstile_wait', 'info');
    setBusy(true);
    try {
      await dataProvider.register({ ...form, aff_code: localStorage.getItem(AFF_STORAGE_KEY) ?? '' }, turnstileToken);
      notice('app.auth.register_success', 'success');
      void navigate('/login');
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(false);
    }
  };

  const sendCode = async () => {
    if (!form.email) return;
    if (botCheckPending) return notice('app.validation.turnstile_wait', 'info');
    try {
      await dataProvider.sendVerificationCode(form.email, turnstileToken);
      cooldown.start();
      notice('app.auth.code_sent', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return { status, form, set, setTurnstileToken, busy, cooldown, submit, sendCode };
}

interface EmailCodeFieldsProps {
  form: RegisterFields;
  set: (field: keyof RegisterFields) => (event: { target: { value: string } }) => void;
  cooldown: ReturnType<typeof useCooldown>;
  sendCode: () => Promise<unknown>;
}

/** The e-mail address, its send-code button (locked while the cooldown runs), and the code it received. */
function EmailCodeFields({ form, set, cooldown, sendCode }: EmailCodeFieldsProps) {
  const translate = useTranslate();
  return (
    <>
      <Stack direction="row" spacing={1}>
        <TextField
          name="email"
          type="email"
          label={translate('app.auth.email')}
          value={form.email}
          onChange={set('email')}
          autoComplete="email"
          fullWidth
        />
        <Button variant="outlined" onClick={() => void sendCode()} disabled={cooldown.active} sx={{ whiteSpace: 'nowrap', minWidth: 120 }}>
          {cooldown.active ? translate('app.auth.resend_in', { seconds: cooldown.left }) : translate('app.auth.send_code')}
        </Button>
      </Stack>
      <TextField
        name="verification_code"
        label={translate('app.auth.verification_code')}
        value={form.verification_code}
        onChange={set('verification_code')}
        fullWidth
      />
    </>
  );
}

/** The registration page. */
export function RegisterPage() {
  const translate = useTranslate();
  const { status, form, set, setTurnstileToken, busy, cooldown, submit, sendCode } = useRegisterForm();

  return (
    <AuthCard title={translate('app.auth.register_title')}>
      {status && !status.register_enabled && (
        <Alert severity="info" sx={{ mb: 2 }}>
          {translate('app.auth.register_closed')}
        </Alert>
      )}
      <Box component="form" onSubmit={(event) => void submit(event)} noValidate>
        <Stack spacing={2}>
          <TextField
            name="username"
            label={translate('app.auth.username')}
            placeholder={translate('app.auth.username_placeholder')}
            value={form.username}
            onChange={set('username')}
            autoComplete="username"
            fullWidth
          />
          <TextField
            name="password"
            type="password"
            label={translate('app.auth.password')}
            placeholder={translate('app.auth.password_placeholder')}
            value={form.password}
            onChange={set('password')}
            autoComplete="new-password"
            fullWidth
          />
          <TextField
            name="password2"
            type="password"
            label={translate('app.auth.confirm_password')}
            value={form.password2}
            onChange={set('password2')}
            autoComplete="new-password"
            fullWidth
          />
          {status?.email_verification && <EmailCodeFields form={form} set={set} cooldown={cooldown} sendCode={sendCode} />}
          {status?.turnstile_check && status.turnstile_site_key && (
            <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
          )}
          <Button type="submit" variant="contained" size="large" disableElevation disabled={busy} fullWidth>
            {translate('app.auth.register')}
          </Button>
        </Stack>
      </Box>
      <Typography variant="body2" color="text.secondary" sx={{ mt: 2, textAlign: 'center' }}>
        {translate('app.auth.have_account')}{' '}
        <Link component={RouterLink} to="/login">
          {translate('app.auth.login')}
        </Link>
      </Typography>
    </AuthCard>
  );
}
