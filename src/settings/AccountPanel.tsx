// What the account's sign-in panels (TwoFactorPanel, PasskeyPanel) share: the
// state loaded when the panel opens, shown as "Loading" until it comes and as
// an error with Refresh when it cannot; and one request at a time, its error
// told in a notice.
import { Alert, Button, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { errorMessage } from '../dataProvider/errorMessage';
import { useNotice } from '../layout/notice';

/** `fetch` (a stable function) loads on mount and on `load()`; `value` is null until it first answers. */
export function useLoadedState<T>(fetch: () => Promise<T>) {
  const [value, setValue] = useState<T | null>(null);
  const [loadError, setLoadError] = useState('');
  const load = useCallback(async () => {
    try {
      setValue(await fetch());
      setLoadError('');
    } catch (error) {
      setLoadError(errorMessage(error));
    }
  }, [fetch]);
  useEffect(() => {
    void load();
  }, [load]);
  return { value, setValue, loadError, load };
}

/** `busy` while a request runs; `run` resolves to whether it succeeded (its error is shown in a notice). */
export function useBusyRun() {
  const notice = useNotice();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>): Promise<boolean> => {
    setBusy(true);
    try {
      await action();
      return true;
    } catch (error) {
      notice(errorMessage(error), 'error');
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, run, notice };
}

/** What the panel shows before its state is at hand: the load's error with Refresh, or "Loading". */
export function PanelPending({ loadError, onRetry }: { loadError: string; onRetry: () => void }) {
  const translate = useTranslate();
  if (loadError) {
    return (
      <Alert
        severity="error"
        action={
          <Button color="inherit" size="small" onClick={onRetry}>
            {translate('ra.action.refresh')}
          </Button>
        }
      >
        {translate(loadError, { _: loadError })}
      </Alert>
    );
  }
  return <Typography color="text.secondary">{translate('ra.page.loading')}</Typography>;
}
