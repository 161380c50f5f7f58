// /topup: redeem a code, get one from the operator's shop link, see the balance.
import RedeemIcon from '@mui/icons-material/Redeem';
import { Alert, Box, Button, Card, CardContent, Link, Stack, TextField, Typography } from '@mui/material';
import { Link as RouterLink } from 'react-router-dom';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import { dataProvider } from '../dataProvider';
import { LoadError } from '../layout/LoadError';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { formatQuota } from '../quota';
import { Balance } from '../resources/shared/QuotaField';
import { errorMessage } from '../dataProvider/errorMessage';

/** The signed-in user's remaining quota (null until loaded, or when loading failed), with a reload. */
function useOwnQuota() {
  const [quota, setQuota] = useState<number | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const loadQuota = useCallback(() => {
    setLoadFailed(false);
    dataProvider
      .getSelf()
      .then((user) => setQuota(user.quota))
      .catch(() => {
        setQuota(null);
        setLoadFailed(true);
      });
  }, []);
  useEffect(loadQuota, [loadQuota]);
  return { quota, setQuota, loadFailed, loadQuota };
}

function TopUp() {
  const translate = useTranslate();
  const notice = useNotice();
  const { status } = useStatus();
  const { quota, setQuota, loadFailed, loadQuota } = useOwnQuota();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [noLink, setNoLink] = useState(false);

  const redeem = async (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return notice('app.topup.enter_code', 'info');
    setBusy(true);
    try {
      const added = await dataProvider.topUp(code.trim());
      notice('app.topup.success', 'success', { quota: formatQuota(added, status) });
      setCode('');
      setQuota((previous) => (previous === null ? previous : previous + added));
    } catch (error) {
      const message = errorMessage(error);
      const unreachable = message === 'app.errors.network' || (message.startsWith('Error: ') && !message.includes('redeem'));
      notice(unreachable ? 'app.errors.request_failed' : message, 'error');
    } finally {
      setBusy(false);
    }
  };

  const getCode = () => {
    if (status?.top_up_link) window.open(status.top_up_link, '_blank', 'noopener');
    else setNoLink(true);
  };

  return (
    <Card variant="outlined" sx={{ borderRadius: 3, maxWidth: 560, mx: 'auto' }}>
      <CardContent sx={{ p: { xs: 3, sm: 4 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 1 }}>
          {translate('app.topup.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {translate('app.topup.remaining')}
        </Typography>
        <Typography variant="h4" component="p" sx={{ fontWeight: 700, mb: 3 }} data-testid="remaining-quota">
          {quota === null ? '—' : <Balance quota={quota} />}
        </Typography>
        {loadFailed && <LoadError onRetry={loadQuota} />}
        <Box component="form" onSubmit={(event) => void redeem(event)} noValidate>
          <Stack spacing={2}>
            <TextField
              name="code"
              label={translate('app.topup.code')}
              value={code}
              onChange={(event) => setCode(event.target.value)}
              fullWidth
              autoComplete="off"
            />
            <Stack direction="row" spacing={1}>
              <Button type="submit" variant="contained" disableElevation startIcon={<RedeemIcon />} disabled={busy}>
                {translate('app.topup.redeem')}
              </Button>
              <Button variant="outlined" onClick={getCode}>
                {translate('app.topup.get_code')}
              </Button>
            </Stack>
            {noLink && <Alert severity="info">{translate('app.topup.no_link')}</Alert>}
            <Link component={RouterLink} to="/pricing" underline="hover">
              {translate('pricing.link')}
            </Link>
          </Stack>
        </Box>
      </CardContent>
    </Card>
  );
}

export default function TopUpPage() {
  return (
    <Authenticated>
      <TopUp />
    </Authenticated>
  );
}
