// What the organisation screens share: loading with a retry, a row that lays
// its parts out in a line on wide screens and stacks them on narrow ones, and
// the action that reports its outcome as a notice.
import { Paper, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import { errorMessage } from '../../dataProvider/errorMessage';
import { useNotice } from '../../layout/notice';

/** Data loaded once and again on reload(): undefined while loading, `failed` when it could not be. */
export function useLoaded<T>(load: () => Promise<T>) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  const reload = useCallback(() => {
    setFailed(false);
    load()
      .then(setData)
      .catch(() => setFailed(true));
  }, [load]);
  useEffect(reload, [reload]);
  return { data, failed, reload };
}

/** Runs a change, then says so (`done`, a message key) or shows the server's refusal; resolves whether it worked. */
export function useAction() {
  const notice = useNotice();
  return useCallback(
    async (change: () => Promise<unknown>, done: string): Promise<boolean> => {
      try {
        await change();
        notice(done, 'success');
        return true;
      } catch (error) {
        notice(errorMessage(error), 'error');
        return false;
      }
    },
    [notice],
  );
}

/** One record: its title and facts, then its actions; a line at 1440 px, a stack at 390. */
export function RecordRow({ title, facts, actions }: { title: ReactNode; facts?: ReactNode; actions?: ReactNode }) {
  return (
    <Paper variant="outlined" sx={{ p: 2, borderRadius: 2 }} component="li">
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={1.5} sx={{ alignItems: { md: 'center' } }}>
        <Stack sx={{ flex: 1, minWidth: 0 }} spacing={0.5}>
          <Typography component="div" sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
            {title}
          </Typography>
          {facts && (
            <Typography component="div" variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
              {facts}
            </Typography>
          )}
        </Stack>
        {actions && (
          <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
            {actions}
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}

/** A list of RecordRows, or a line saying there is nothing (`empty`, a message key). */
export function RecordList({ empty, children }: { empty: string; children: ReactNode[] }) {
  const translate = useTranslate();
  if (children.length === 0)
    return (
      <Typography variant="body2" color="text.secondary">
        {translate(empty)}
      </Typography>
    );
  return (
    <Stack component="ul" spacing={1} sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {children}
    </Stack>
  );
}
