// Bind an e-mail address: send a code (30 s cooldown, bot check when on), then confirm it.
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, TextField } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { errorMessage } from '../dataProvider/errorMessage';
import { Turnstile } from '../layout/Turnstile';
import { useCooldown } from '../layout/useCooldown';

export function BindEmailDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  const cooldown = useCooldown(30);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [turnstileToken, setTurnstileToken] = useState('');
  const botCheckPending = Boolean(status?.turnstile_check) && !turnstileToken;

  const sendCode = async () => {
    if (!email) return notice('app.validation.email_required', 'info');
    if (botCheckPending) return notice('app.validation.turnstile_wait', 'warning');
    try {
      await dataProvider.sendVerificationCode(email, turnstileToken);
      cooldown.start();
      notice('app.auth.code_sent', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const bind = async () => {
    if (!code) return notice('app.validation.code_required', 'info');
    if (botCheckPending) return notice('app.validation.turnstile_wait', 'warning');
    try {
      await dataProvider.bindEmail(email, code);
      notice('app.auth.bind_success', 'success');
      onClose();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{translate('app.setting.bind_email')}</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          <Stack direction="row" spacing={1}>
            <TextField
              name="email"
              type="email"
              label={translate('app.auth.email')}
              value={email}
              onChange={(event) => setEmail(event.target.value)}
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
            name="code"
            label={translate('app.auth.verification_code')}
            value={code}
            onChange={(event) => setCode(event.target.value)}
            fullWidth
          />
          {status?.turnstile_check && status.turnstile_site_key && (
            <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('ra.action.cancel')}</Button>
        <Button variant="contained" disableElevation onClick={() => void bind()}>
          {translate('app.setting.bind')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
