// Root's reset of a user's two-factor sign-in, on the user edit page: for a
// user who lost both their authenticator and their recovery codes (or their
// passkeys, which it removes too). Confirmed first; afterwards the password
// alone signs them in again.
import { Box, Button, Chip, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Confirm, useTranslate } from 'react-admin';
import { isRoot } from '../../../common/roles';
import { readStoredUser } from '../../dataProvider/storage';
import { dataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';

export function UserTwoFactorReset({ id }: { id: string }) {
  const translate = useTranslate();
  const notice = useNotice();
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const status = await dataProvider.userTwoFactor(id);
      // passkeys are second factors too: the reset removes them as well
      setEnabled(status.enabled || (status.passkeys ?? 0) > 0);
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  }, [id, notice]);
  useEffect(() => {
    void load();
  }, [load]);

  const reset = async () => {
    setBusy(true);
    try {
      await dataProvider.resetUserTwoFactor(id);
      notice('app.two_factor.reset_done', 'success');
      setConfirming(false);
      await load();
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(false);
    }
  };

  if (enabled === null) return null;
  return (
    <Box sx={{ maxWidth: 560, mt: 3 }} data-testid="user-two-factor">
      <Typography variant="h6" component="h2" sx={{ fontWeight: 700, mb: 1 }}>
        {translate('app.two_factor.title')}
      </Typography>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
        <Chip
          color={enabled ? 'success' : 'default'}
          label={translate(enabled ? 'app.two_factor.on' : 'app.two_factor.off')}
          sx={{ alignSelf: 'flex-start' }}
        />
        <Button variant="outlined" color="error" disabled={!enabled} onClick={() => setConfirming(true)}>
          {translate('app.two_factor.reset')}
        </Button>
      </Stack>
      <Confirm
        isOpen={confirming}
        loading={busy}
        title="app.two_factor.reset_title"
        content="app.two_factor.reset_content"
        confirm="app.two_factor.reset"
        confirmColor="warning"
        onConfirm={() => void reset()}
        onClose={() => setConfirming(false)}
      />
    </Box>
  );
}

/** Only root sees (and may use) the reset. */
export function RootTwoFactorReset({ id }: { id: string | undefined }) {
  if (!id || !isRoot(readStoredUser()?.role)) return null;
  return <UserTwoFactorReset id={id} />;
}
