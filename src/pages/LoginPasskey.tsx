// The passkey button of /login: on the password step it signs in with a
// passkey alone (the browser offers the passkeys it holds for this site); on
// the second step it finishes a password sign-in with one of the account's.
// The server tells the two apart by the session (see routes/api/passkey.ts).
// PasskeyStep is that second step for an account without an authenticator app.
import FingerprintIcon from '@mui/icons-material/Fingerprint';
import { Button, Link, Stack, Typography } from '@mui/material';
import { useState } from 'react';
import { useLogin, useTranslate } from 'react-admin';
import { errorMessage } from '../dataProvider/errorMessage';
import { browserHasPasskeys } from '../dataProvider/passkeyCalls';
import { useNotice } from '../layout/notice';
import { AuthCard } from './AuthCard';

interface PasskeySignInButtonProps {
  label: string;
  /** Space above it (under the password form). */
  spaced?: boolean;
  /** The half-signed-in session ended (401): the password is asked again. */
  onExpired?: () => void;
}

/** Signs in with a passkey; nothing where the browser has no WebAuthn. */
export function PasskeySignInButton({ label, spaced, onExpired }: PasskeySignInButtonProps) {
  const translate = useTranslate();
  const login = useLogin();
  const notice = useNotice();
  const [busy, setBusy] = useState(false);
  if (!browserHasPasskeys()) return null;

  const signIn = async () => {
    setBusy(true);
    try {
      await login({ passkey: true });
      notice('app.auth.login_success', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
      if ((error as { status?: number })?.status === 401) onExpired?.();
    } finally {
      setBusy(false);
    }
  };

  return (
    <Button
      variant="outlined"
      size="large"
      disableElevation
      fullWidth
      startIcon={<FingerprintIcon />}
      disabled={busy}
      onClick={() => void signIn()}
      sx={spaced ? { mt: 1.5 } : undefined}
    >
      {translate(label)}
    </Button>
  );
}

/** The second step for an account whose second factors are passkeys only: no code to type, the passkey button. */
export function PasskeyStep({ onBack }: { onBack: () => void }) {
  const translate = useTranslate();
  return (
    <AuthCard title={translate('app.two_factor.login_title')}>
      <Stack spacing={2}>
        <Typography variant="body2" color="text.secondary">
          {translate('passkey.second_step_help')}
        </Typography>
        <PasskeySignInButton label="passkey.use_passkey" onExpired={onBack} />
        <Link component="button" type="button" variant="body2" onClick={onBack} sx={{ alignSelf: 'flex-start' }}>
          {translate('app.two_factor.back')}
        </Link>
      </Stack>
    </AuthCard>
  );
}
