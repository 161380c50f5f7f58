// /user/reset?email=&token=: confirm the reset; the server answers with the new
// password, which is shown and copied to the clipboard.
import { Alert, Button, Stack, TextField } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import { useSearchParams } from 'react-router-dom';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { AuthCard } from './AuthCard';
import { errorMessage } from '../dataProvider/errorMessage';

export function ResetConfirmPage() {
  const translate = useTranslate();
  const notice = useNotice();
  const [searchParams] = useSearchParams();
  const email = searchParams.get('email') ?? '';
  const token = searchParams.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    setBusy(true);
    try {
      const newPassword = await dataProvider.confirmPasswordReset(email, token);
      setPassword(newPassword);
      try {
        await navigator.clipboard.writeText(newPassword);
        notice('app.auth.new_password_copied', 'notice', { password: newPassword });
      } catch {
        notice('app.errors.copy_manually', 'warning', { value: newPassword });
      }
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthCard title={translate('app.auth.reset_confirm_title')}>
      {!email || !token ? (
        <Alert severity="warning">{translate('app.auth.reset_missing_link')}</Alert>
      ) : (
        <Stack spacing={2}>
          <TextField label={translate('app.auth.email')} value={email} slotProps={{ input: { readOnly: true } }} fullWidth />
          {password && (
            <TextField
              label={translate('app.auth.reset_new_password')}
              value={password}
              slotProps={{ input: { readOnly: true } }}
              fullWidth
            />
          )}
          <Button
            variant="contained"
            size="large"
            disableElevation
            disabled={busy || Boolean(password)}
            onClick={() => void confirm()}
            fullWidth
          >
            {translate('app.auth.reset_confirm_submit')}
          </Button>
        </Stack>
      )}
    </AuthCard>
  );
}
