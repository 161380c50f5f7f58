// The second step of /login for an account with two-factor sign-in: the code
// from the authenticator app, one of its recovery codes, or a passkey.
// LoginPage.tsx shows it after the password (or GitHub's callback) asked for
// it. An account with passkeys but no authenticator app gets PasskeyStep
// (LoginPasskey.tsx) instead.
import { Box, Button, Link, Stack, TextField, Typography } from '@mui/material';
import { useState, type FormEvent } from 'react';
import { useLogin, useTranslate } from 'react-admin';
import { useNotice } from '../layout/notice';
import type { SecondFactor } from '../../common/records';
import { AuthCard } from './AuthCard';
import { PasskeySignInButton } from './LoginPasskey';
import { errorMessage } from '../dataProvider/errorMessage';

/** Asks for the code (or a passkey, unless `factors` leaves it out) and signs in with it; `onBack` returns to the password step. */
export function SecondFactorStep({ factors, onBack }: { factors?: SecondFactor[]; onBack: () => void }) {
  const translate = useTranslate();
  const login = useLogin();
  const notice = useNotice();
  const [busy, setBusy] = useState(false);
  const [useRecoveryCode, setUseRecoveryCode] = useState(false);
  const [code, setCode] = useState('');

  const submitCode = async (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    setBusy(true);
    try {
      await login({ code: code.trim() });
      notice('app.auth.login_success', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
      // the code step lasts a few minutes: after that the password is asked again
      if ((error as { status?: number })?.status === 401) onBack();
    } finally {
      setBusy(false);
    }
  };

  const withPasskey = !factors || factors.includes('passkey');
  return (
    <AuthCard title={translate('app.two_factor.login_title')}>
      <Box component="form" onSubmit={(event) => void submitCode(event)} noValidate>
        <Stack spacing={2}>
          <Typography variant="body2" color="text.secondary">
            {translate(useRecoveryCode ? 'app.two_factor.login_recovery_help' : 'app.two_factor.login_help')}
          </Typography>
          <TextField
            key={useRecoveryCode ? 'recovery' : 'totp'}
            name={useRecoveryCode ? 'recovery-code' : 'code'}
            label={translate(useRecoveryCode ? 'app.two_factor.recovery_code' : 'app.two_factor.code')}
            value={code}
            onChange={(event) => setCode(event.target.value)}
            autoComplete="one-time-code"
            slotProps={{
              htmlInput: useRecoveryCode
                ? { maxLength: 16, autoCapitalize: 'none', spellCheck: false }
                : { inputMode: 'numeric', maxLength: 8 },
            }}
            autoFocus
            fullWidth
          />
          <Button type="submit" variant="contained" size="large" disableElevation disabled={busy || !code.trim()} fullWidth>
            {translate('app.two_factor.verify')}
          </Button>
          {withPasskey && <PasskeySignInButton label="passkey.use_passkey" onExpired={onBack} />}
        </Stack>
      </Box>
      <Stack direction="row" sx={{ mt: 2, justifyContent: 'space-between', flexWrap: 'wrap', gap: 1 }}>
        <Link
          component="button"
          type="button"
          variant="body2"
          onClick={() => {
            setUseRecoveryCode(!useRecoveryCode);
            setCode('');
          }}
        >
          {translate(useRecoveryCode ? 'app.two_factor.use_app' : 'app.two_factor.use_recovery')}
        </Link>
        <Link component="button" type="button" variant="body2" onClick={onBack}>
          {translate('app.two_factor.back')}
        </Link>
      </Stack>
    </AuthCard>
  );
}
