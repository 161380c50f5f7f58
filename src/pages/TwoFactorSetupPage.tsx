// /two-factor: where an account is kept, after signing in, until it has a
// second factor (when root requires one for admins or for everyone): an
// authenticator app, or a passkey. The server refuses it everything else meanwhile.
import { Button, Stack, Typography } from '@mui/material';
import { useLogout, useTranslate } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { readStoredUser, storeUser } from '../dataProvider/storage';
import { PasskeyPanel } from '../settings/PasskeyPanel';
import { Section } from '../settings/PersonalSections';
import { TwoFactorPanel } from '../settings/TwoFactorPanel';
import { AuthCard } from './AuthCard';

export function TwoFactorSetupPage() {
  const translate = useTranslate();
  const logout = useLogout();
  const navigate = useNavigate();

  const confirmed = () => {
    const user = readStoredUser();
    if (user) storeUser({ ...user, two_factor_enrolment_required: false });
  };

  return (
    <AuthCard title={translate('app.two_factor.setup_title')}>
      <Stack spacing={3}>
        <Typography variant="body2" color="text.secondary">
          {translate('passkey.setup_help')}
        </Typography>
        <TwoFactorPanel onConfirmed={confirmed} onEnabled={() => void navigate('/')} />
        <Section title="passkey.title" help="passkey.help">
          <PasskeyPanel
            onAdded={() => {
              confirmed();
              void navigate('/');
            }}
          />
        </Section>
        <Button onClick={() => void logout()} sx={{ alignSelf: 'flex-start' }}>
          {translate('ra.auth.logout')}
        </Button>
      </Stack>
    </AuthCard>
  );
}
