// /reset: ask for a password-reset e-mail (30 s cooldown after sending).
import { Box, Button, Stack, TextField, Typography } from '@mui/material';
import { useState, type FormEvent } from 'react';
import { useTranslate } from 'react-admin';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { AuthCard } from './AuthCard';
import { errorMessage } from '../dataProvider/errorMessage';
import { Turnstile } from '../layout/Turnstile';
import { useCooldown } from '../layout/useCooldown';

export function ResetRequestPage() {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  const [email, setEmail] = useState('');
  const [turnstileToken, setTurnstileToken] = useState('');
  const cooldown = useCooldown(30);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!email) return notice('app.validation.email_required', 'info');
    if (status?.turnstile_check && !turnstileToken) return notice('app.validation.turnstile_wait', 'info');
    try {
      await dataProvider.sendPasswordReset(email, turnstileToken);
      cooldown.start();
      notice('app.auth.reset_sent', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <AuthCard title={translate('app.auth.reset_title')}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        {translate('app.auth.reset_help')}
      </Typography>
      <Box component="form" onSubmit={(event) => void submit(event)} noValidate>
        <Stack spacing={2}>
          <TextField
            name="email"
            type="email"
            label={translate('app.auth.email')}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            autoComplete="email"
            fullWidth
          />
          {status?.turnstile_check && status.turnstile_site_key && (
            <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
          )}
          <Button type="submit" variant="contained" size="large" disableElevation disabled={cooldown.active} fullWidth>
            {cooldown.active ? translate('app.auth.resend_in', { seconds: cooldown.left }) : translate('app.auth.reset_submit')}
          </Button>
        </Stack>
      </Box>
    </AuthCard>
  );
}
