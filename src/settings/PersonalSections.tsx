// The sections of the Personal tab (PersonalTab.tsx) that hold state of their
// own: the access token, the account bindings (with the WeChat dialog), the
// invite link, and account deletion confirmed by typing one's own username;
// and Section, the heading and help every section of the tab starts with.
import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useLogout, useTranslate } from 'react-admin';
import { readStoredUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { copyText } from '../resources/shared/clipboard';
import { useStatus } from '../layout/status';
import { startGitHubSignIn } from '../layout/githubAuthorize';
import { BindEmailDialog } from './BindEmailDialog';

/** A section of the tab: its title, an optional line of help, then its controls. */
export function Section({ title, help, children }: { title: string; help?: string; children: React.ReactNode }) {
  const translate = useTranslate();
  return (
    <Box>
      <Typography variant="h6" component="h2" sx={{ fontWeight: 700, mb: 0.5 }}>
        {translate(title)}
      </Typography>
      {help && (
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate(help)}
        </Typography>
      )}
      {children}
    </Box>
  );
}

/** Copies a value to the clipboard, or shows it for copying by hand when the browser refuses. */
function useCopyOrShow() {
  const notice = useNotice();
  return async (value: string, success: string) => {
    if (await copyText(value)) notice(success, 'success');
    else notice('app.errors.copy_manually', 'warning', { value });
  };
}

/** Generates a new access token, copies it and shows it. */
export function AccessTokenSection() {
  const translate = useTranslate();
  const notice = useNotice();
  const copyOrShow = useCopyOrShow();
  const [accessToken, setAccessToken] = useState('');

  const generateToken = async () => {
    try {
      const token = await dataProvider.generateAccessToken();
      setAccessToken(token);
      await copyOrShow(token, 'app.setting.token_copied');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <Section title="app.setting.access_token" help="app.setting.access_token_help">
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
        <Button variant="outlined" onClick={() => void generateToken()}>
          {translate('app.setting.generate_token')}
        </Button>
        {accessToken && (
          <TextField
            size="small"
            value={accessToken}
            slotProps={{ input: { readOnly: true, sx: { fontFamily: 'monospace' } } }}
            sx={{ minWidth: 320 }}
          />
        )}
      </Stack>
    </Section>
  );
}

/** Binds the account to WeChat with the code its official account sends. */
function WechatBindDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  const [wechatCode, setWechatCode] = useState('');

  const bindWechat = async () => {
    if (!wechatCode) return;
    try {
      await dataProvider.wechatBind(wechatCode);
      onClose();
      notice('app.auth.bind_success', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{translate('app.setting.bind_wechat')}</DialogTitle>
      <DialogContent>
        {status?.wechat_qrcode && (
          <Box component="img" src={status.wechat_qrcode} alt="" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} />
        )}
        <Typography variant="body2" sx={{ my: 2 }}>
          {translate('app.auth.wechat_send')}
        </Typography>
        <TextField
          label={translate('app.auth.verification_code')}
          value={wechatCode}
          onChange={(event) => setWechatCode(event.target.value)}
          fullWidth
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('ra.action.cancel')}</Button>
        <Button variant="contained" disableElevation onClick={() => void bindWechat()}>
          {translate('app.setting.bind')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** Binds an e-mail address, and GitHub and WeChat when the server has them enabled. */
export function BindingsSection() {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  const [bindEmailOpen, setBindEmailOpen] = useState(false);
  const [wechatOpen, setWechatOpen] = useState(false);

  return (
    <Section title="app.setting.bindings" help="app.setting.bindings_help">
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
        <Button variant="outlined" onClick={() => setBindEmailOpen(true)}>
          {translate('app.setting.bind_email')}
        </Button>
        {status?.github_oauth && (
          <Button variant="outlined" onClick={() => void startGitHubSignIn(status).catch((error) => notice(errorMessage(error), 'error'))}>
            {translate('app.setting.bind_github')}
          </Button>
        )}
        {status?.wechat_login && (
          <Button variant="outlined" onClick={() => setWechatOpen(true)}>
            {translate('app.setting.bind_wechat')}
          </Button>
        )}
      </Stack>
      <WechatBindDialog open={wechatOpen} onClose={() => setWechatOpen(false)} />
      <BindEmailDialog open={bindEmailOpen} onClose={() => setBindEmailOpen(false)} />
    </Section>
  );
}

/** Copies the invite link (/register?aff=<code>). */
export function InviteSection() {
  const translate = useTranslate();
  const notice = useNotice();
  const copyOrShow = useCopyOrShow();

  const copyInvite = async () => {
    try {
      const code = await dataProvider.getAffCode();
      await copyOrShow(`${window.location.origin}/register?aff=${code}`, 'app.setting.invite_copied');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <Section title="app.setting.invite" help="app.setting.invite_help">
      <Button variant="outlined" onClick={() => void copyInvite()}>
        {translate('app.setting.copy_invite')}
      </Button>
    </Section>
  );
}

/** Deletes the account once its own username is typed, then signs out. */
export function DeleteAccountSection() {
  const translate = useTranslate();
  const notice = useNotice();
  const logout = useLogout();
  const user = readStoredUser();
  const [deleteOpen, setDeleteOpen] = useState(false);
  const [typedName, setTypedName] = useState('');

  const deleteAccount = async () => {
    if (typedName !== user?.username) return notice('app.setting.delete_confirm_required', 'warning');
    try {
      await dataProvider.deleteSelf();
      setDeleteOpen(false);
      notice('app.setting.account_deleted', 'success');
      void logout();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <>
      {/* the super admin cannot delete itself (the server refuses too) */}
      {(user?.role ?? 0) < 100 && (
        <Section title="app.setting.danger" help="app.setting.delete_help">
          <Button color="error" variant="outlined" onClick={() => setDeleteOpen(true)}>
            {translate('app.setting.delete_account')}
          </Button>
        </Section>
      )}
      <Dialog open={deleteOpen} onClose={() => setDeleteOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('app.setting.delete_account')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" sx={{ mb: 2 }}>
            {translate('app.setting.delete_type_name', { username: user?.username ?? '' })}
          </Typography>
          <TextField name="confirm_username" value={typedName} onChange={(event) => setTypedName(event.target.value)} fullWidth autoFocus />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setDeleteOpen(false)}>{translate('ra.action.cancel')}</Button>
          <Button color="error" variant="contained" disableElevation onClick={() => void deleteAccount()}>
            {translate('app.setting.delete_account')}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
