// /login: password sign-in, links to reset and register, and the GitHub and
// WeChat buttons when the server has them enabled. An account with two-factor
// sign-in gets a second step here: the code from the authenticator app, or
// one of its recovery codes.
import GitHubIcon from '@mui/icons-material/GitHub';
import QrCodeIcon from '@mui/icons-material/QrCode2';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Divider,
  Link,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useState, type FormEvent } from 'react';
import { useLogin, useTranslate } from 'react-admin';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router-dom';
import { needsSecondFactor } from '../authProvider';
import { storeUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { AuthCard } from './AuthCard';
import { errorMessage } from '../dataProvider/errorMessage';
import { startGitHubSignIn } from '../layout/githubAuthorize';

export function LoginPage() {
  const translate = useTranslate();
  const login = useLogin();
  const notice = useNotice();
  const navigate = useNavigate();
  const { status } = useStatus();
  const [searchParams] = useSearchParams();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // why the server refused these credentials, shown under the password field until either field changes
  const [refusal, setRefusal] = useState('');
  const [busy, setBusy] = useState(false);
  const [wechatOpen, setWechatOpen] = useState(false);
  const [wechatCode, setWechatCode] = useState('');
  // GitHub's callback sends an account with two-factor sign-in here for its code
  const [step, setStep] = useState<'password' | 'code'>(searchParams.get('two_factor') ? 'code' : 'password');
  const [useRecoveryCode, setUseRecoveryCode] = useState(false);
  const [code, setCode] = useState('');

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
        setStep('code');
        setCode('');
      } else {
        setRefusal(errorMessage(error));
      }
    } finally {
      setBusy(false);
    }
  };

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
      if ((error as { status?: number })?.status === 401) backToPassword();
    } finally {
      setBusy(false);
    }
  };

  /** A change to either field takes back the refusal it marks. */
  const retyped = (set: (value: string) => void) => (event: { target: { value: string } }) => {
    set(event.target.value);
    setRefusal('');
  };

  const backToPassword = () => {
    setStep('password');
    setCode('');
    setUseRecoveryCode(false);
  };

  if (step === 'code') {
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
          <Link component="button" type="button" variant="body2" onClick={backToPassword}>
            {translate('app.two_factor.back')}
          </Link>
        </Stack>
      </AuthCard>
    );
  }

  const wechatLogin = async () => {
    if (!wechatCode) return;
    try {
      const user = await dataProvider.wechatLogin(wechatCode);
      storeUser(user);
      setWechatOpen(false);
      notice('app.auth.login_success', 'success');
      void navigate('/');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  return (
    <AuthCard title={translate('app.auth.login_title')}>
      {searchParams.get('expired') && (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {translate('app.auth.expired')}
        </Alert>
      )}
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
      {(status?.github_oauth || status?.wechat_login) && (
        <>
          <Divider sx={{ my: 3 }}>{translate('app.auth.or')}</Divider>
          <Stack spacing={1.5}>
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
              <Button variant="outlined" color="success" startIcon={<QrCodeIcon />} onClick={() => setWechatOpen(true)} fullWidth>
                {translate('app.auth.wechat')}
              </Button>
            )}
          </Stack>
        </>
      )}
      <Dialog open={wechatOpen} onClose={() => setWechatOpen(false)} maxWidth="xs" fullWidth>
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
            value={wechatCode}
            onChange={(event) => setWechatCode(event.target.value)}
            fullWidth
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setWechatOpen(false)}>{translate('app.auth.cancel')}</Button>
          <Button variant="contained" disableElevation onClick={() => void wechatLogin()}>
            {translate('app.auth.login')}
          </Button>
        </DialogActions>
      </Dialog>
    </AuthCard>
  );
}
