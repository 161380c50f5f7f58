// The other ways into /login than the password: the single sign-on, GitHub and WeChat buttons
// when the server has them enabled, and the WeChat dialog (its QR code and the
// code its official account sends). LoginPage.tsx holds the dialog's state
// (useWechatSignIn) so that it outlasts a visit to the two-factor step.
import GitHubIcon from '@mui/icons-material/GitHub';
import KeyIcon from '@mui/icons-material/Key';
import QrCodeIcon from '@mui/icons-material/QrCode2';
import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Divider, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { storeUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { errorMessage } from '../dataProvider/errorMessage';
import { startGitHubSignIn } from '../layout/githubAuthorize';

/** The WeChat dialog's state, and signing in with its code. */
export function useWechatSignIn() {
  const notice = useNotice();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [code, setCode] = useState('');

  const login = async () => {
    if (!code) return;
    try {
      const user = await dataProvider.wechatLogin(code);
      storeUser(user);
      setOpen(false);
      notice('app.auth.login_success', 'success');
      void navigate('/');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return { open, setOpen, code, setCode, login };
}

/** Sends the browser to the single sign-on provider; the server keeps what its answer must match. */
async function startSingleSignOn(): Promise<void> {
  window.location.assign(await dataProvider.startOidc());
}

/** The single sign-on, GitHub and WeChat buttons under a divider, when the server has any enabled. */
export function OtherSignIns({ onWechat }: { onWechat: () => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  if (!(status?.oidc || status?.github_oauth || status?.wechat_login)) return null;
  return (
    <>
      <Divider sx={{ my: 3 }}>{translate('app.auth.or')}</Divider>
      <Stack spacing={1.5}>
        {status?.oidc && (
          <Button
            variant="contained"
            disableElevation
            startIcon={<KeyIcon />}
            onClick={() => void startSingleSignOn().catch((error) => notice(errorMessage(error), 'error'))}
            fullWidth
          >
            {status.oidc_button_text || translate('app.auth.sso')}
          </Button>
        )}
        {status?.github_oauth && (
          <Button
            variant="outlined"
            startIcon={<GitHubIcon />}
            onClick={() => void startGitHubSignIn(status).catch((error) => notice(errorMessage(error), 'error'))}
            fullWidth
          >
            {translate('app.auth.github')}
          </Button>
        )}
        {status?.wechat_login && (
          <Button variant="outlined" color="success" startIcon={<QrCodeIcon />} onClick={onWechat} fullWidth>
            {translate('app.auth.wechat')}
          </Button>
        )}
      </Stack>
    </>
  );
}

/** The WeChat sign-in dialog: the QR code to follow, and the code the official account sends. */
export function WechatLoginDialog({ wechat }: { wechat: ReturnType<typeof useWechatSignIn> }) {
  const translate = useTranslate();
  const { status } = useStatus();
  return (
    <Dialog open={wechat.open} onClose={() => wechat.setOpen(false)} maxWidth="xs" fullWidth>
      <DialogTitle>{translate('app.auth.wechat_title')}</DialogTitle>
      <DialogContent>
        {status?.wechat_qrcode && (
          <Box component="img" src={status.wechat_qrcode} alt="" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} />
        )}
        <Typography variant="body2" sx={{ mt: 2 }}>
          {translate('app.auth.wechat_scan')}
        </Typography>
        <Typography variant="body2">{translate('app.auth.wechat_send')}</Typography>
        <Typography variant="body2" sx={{ mb: 2 }}>
          {translate('app.auth.wechat_valid')}
        </Typography>
        <TextField
          label={translate('app.auth.verification_code')}
          value={wechat.code}
          onChange={(event) => wechat.setCode(event.target.value)}
          fullWidth
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={() => wechat.setOpen(false)}>{translate('app.auth.cancel')}</Button>
        <Button variant="contained" disableElevation onClick={() => void wechat.login()}>
          {translate('app.auth.login')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
