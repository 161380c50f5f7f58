// /register: username and password twice; e-mail with a code when the server
// requires verification; the bot check when it is on. An `aff` invite code in
// the query is remembered locally and sent with the registration.
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

export function RegisterPage() {
  const translate = useTranslate();
  const notice = useNotice();
  const navigate = useNavigate();
  const { status } = useStatus();
  const [searchParams] = useSearchParams();
  const [form, setForm] = useState({ username: '', password: '', password2: '', email: '', verification_code: '' });
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
          {status?.email_verification && (
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
                <Button
                  variant="outlined"
                  onClick={() => void sendCode()}
                  disabled={cooldown.active}
                  sx={{ whiteSpace: 'nowrap', minWidth: 120 }}
                >
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
          )}
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
