// /login: password sign-in, links to reset and register, and the GitHub and
// WeChat buttons when the server has them enabled (LoginOtherWays.tsx). An
// account with two-factor sign-in gets a second step here: the code from the
// authenticator app, one of its recovery codes, or a passkey (LoginSecondFactor.tsx).
// A passkey also signs in alone, without the password (LoginPasskey.tsx).
import { Alert, Box, Button, Link, Stack, TextField, Typography } from '@mui/material';
import { useState, type FormEvent } from 'react';
import { useLogin, useTranslate } from 'react-admin';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import type { SecondFactor } from '../../common/records';
import { needsSecondFactor, secondFactorsOf } from '../authProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { AuthCard } from './AuthCard';
import { errorMessage } from '../dataProvider/errorMessage';
import { OtherSignIns, WechatLoginDialog, useWechatSignIn } from './LoginOtherWays';
import { PasskeySignInButton, PasskeyStep } from './LoginPasskey';
import { SecondFactorStep } from './LoginSecondFactor';

/** The password step's fields and its submit; `onSecondFactor`: the account asks for its second factor next (those it names). */
function usePasswordSignIn(onSecondFactor: (factors?: SecondFactor[]) => void) {
  const login = useLogin();
  const notice = useNotice();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // why the server refused these credentials, shown under the password field until either field changes
  const [refusal, setRefusal] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!username || !password) return;
    setBusy(true);
    setRefusal('');
    try {
      await login({ username, password });
      notice('app.auth.login_success', 'success');
    } catch (error) {
      if (needsSecondFactor(error)) {
        onSecondFactor(secondFactorsOf(error));
      } else {
        setRefusal(errorMessage(error));
      }
    } finally {
      setBusy(false);
    }
  };

  /** A change to either field takes back the refusal it marks. */
  const retyped = (set: (value: string) => void) => (event: { target: { value: string } }) => {
    set(event.target.value);
    setRefusal('');
  };

  return { username, setUsername, password, setPassword, refusal, busy, submit, retyped };
}

/** Username, password (with the refusal under it) and the sign-in button. */
function PasswordForm({ signIn }: { signIn: ReturnType<typeof usePasswordSignIn> }) {
  const translate = useTranslate();
  const { username, setUsername, password, setPassword, refusal, busy, submit, retyped } = signIn;
  return (
    <Box component="form" onSubmit={(event) => void submit(event)} noValidate>
      <Stack spacing={2}>
        <TextField
          name="username"
          label={translate('app.auth.username')}
          value={username}
          onChange={retyped(setUsername)}
          error={refusal !== ''}
          autoComplete="username"
          autoFocus
          fullWidth
        />
        <TextField
          name="password"
          type="password"
          label={translate('app.auth.password')}
          value={password}
          onChange={retyped(setPassword)}
          error={refusal !== ''}
          helperText={refusal ? translate(refusal, { _: refusal }) : undefined}
          autoComplete="current-password"
          fullWidth
        />
        <Button type="submit" variant="contained" size="large" disableElevation disabled={busy} fullWidth>
          {translate('app.auth.login')}
        </Button>
      </Stack>
    </Box>
  );
}

/** The sign-in page: the password step, or the two-factor step after it. */
export function LoginPage() {
  const translate = useTranslate();
  const [searchParams] = useSearchParams();
  // GitHub's callback sends an account with two-factor sign-in here for its code
  const [step, setStep] = useState<'password' | 'code'>(searchParams.get('two_factor') ? 'code' : 'password');
  // which second factors the account has, when the password step's refusal said (it does once a passkey can finish it)
  const [factors, setFactors] = useState<SecondFactor[] | undefined>();
  const signIn = usePasswordSignIn((named) => {
    setFactors(named);
    setStep('code');
  });
  const wechat = useWechatSignIn();
  const { status } = useStatus();

  if (step === 'code' && factors && !factors.includes('totp')) return <PasskeyStep onBack={() => setStep('password')} />;
  if (step === 'code') return <SecondFactorStep factors={factors} onBack={() => setStep('password')} />;

  return (
    <AuthCard title={translate('app.auth.login_title')}>
      {searchParams.get('expired') && (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {translate('app.auth.expired')}
        </Alert>
      )}
      {status?.oidc_only && (
        <Alert severity="info" sx={{ mb: 2 }}>
          {translate('app.auth.sso_only')}
        </Alert>
      )}
      <PasswordForm signIn={signIn} />
      <PasskeySignInButton label="passkey.sign_in" spaced />
      <Stack direction="row" sx={{ mt: 2, justifyContent: 'space-between', flexWrap: 'wrap', gap: 1 }}>
        <Typography variant="body2" color="text.secondary">
          {translate('app.auth.forgot_password')}{' '}
          <Link component={RouterLink} to="/reset">
            {translate('app.auth.reset_it')}
          </Link>
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {translate('app.auth.no_account')}{' '}
          <Link component={RouterLink} to="/register">
            {translate('app.auth.register')}
          </Link>
        </Typography>
      </Stack>
      <OtherSignIns onWechat={() => wechat.setOpen(true)} />
      <WechatLoginDialog wechat={wechat} />
    </AuthCard>
  );
}
