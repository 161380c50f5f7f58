// /two-factor: where an admin is kept, after signing in, until they set up
// two-factor sign-in (when root requires it for admins); the server refuses
// them everything else meanwhile.
import { Button, Stack, Typography } from '@mui/material';
import { useLogout, useTranslate } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { readStoredUser, storeUser } from '../dataProvider/storage';
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
          {translate('app.two_factor.setup_help')}
        </Typography>
        <TwoFactorPanel onConfirmed={confirmed} onEnabled={() => void navigate('/')} />
        <Button onClick={() => void logout()} sx={{ alignSelf: 'flex-start' }}>
          {translate('ra.auth.logout')}
        </Button>
      </Stack>
    </AuthCard>
  );
}
