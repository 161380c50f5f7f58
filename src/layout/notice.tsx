// Notices with the spec's durations (success 1.5 s, info 3 s, error 5 s,
// warning 10 s), shown top-centre on screens 600 px wide or narrower; and the
// admin's Notice, shown once per change as a dismissible dialog.
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, useMediaQuery } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Notification, useNotify, useTranslate, type NotificationProps } from 'react-admin';
import { SafeMarkdown } from './LazySafeContent';

export const NOTICE_DURATIONS = { success: 1500, info: 3000, error: 5000, warning: 10000 } as const;
/** The longer "notice" kind (20 s) is shown with the info style. */
export const NOTICE_LONG_DURATION = 20000;
export type NoticeType = keyof typeof NOTICE_DURATIONS;

export function useNotice() {
  const notify = useNotify();
  return useCallback(
    (message: string, type: NoticeType | 'notice' = 'info', messageArgs?: Record<string, unknown>) =>
      notify(message, {
        type: type === 'notice' ? 'info' : type,
        autoHideDuration: type === 'notice' ? NOTICE_LONG_DURATION : NOTICE_DURATIONS[type],
        messageArgs,
      }),
    [notify],
  );
}

export function AppNotification(props: NotificationProps) {
  const narrow = useMediaQuery('(max-width:600px)');
  return (
    <Notification
      {...props}
      autoHideDuration={NOTICE_DURATIONS.error}
      anchorOrigin={narrow ? { vertical: 'top', horizontal: 'center' } : { vertical: 'bottom', horizontal: 'center' }}
    />
  );
}

/** localStorage key holding the notice text this browser last dismissed (one-api's key). */
export const NOTICE_SEEN_KEY = 'notice';

/**
 * The admin's Notice (Markdown, sanitised) in a dialog, unless this browser
 * already dismissed exactly this text: a changed notice is shown again.
 */
export function NoticeDialog({ load }: { load: () => Promise<string> }) {
  const translate = useTranslate();
  const [notice, setNotice] = useState('');
  useEffect(() => {
    let active = true;
    load()
      .then((text) => {
        if (active && text.trim() !== '' && localStorage.getItem(NOTICE_SEEN_KEY) !== text) setNotice(text);
      })
      .catch(() => undefined); // no notice is better than an error about one
    return () => {
      active = false;
    };
  }, [load]);
  const dismiss = () => {
    localStorage.setItem(NOTICE_SEEN_KEY, notice);
    setNotice('');
  };
  return (
    <Dialog open={notice !== ''} onClose={dismiss} fullWidth maxWidth="sm" aria-labelledby="notice-dialog-title">
      <DialogTitle id="notice-dialog-title">{translate('content.notice_title')}</DialogTitle>
      <DialogContent dividers>
        <SafeMarkdown markdown={notice} />
      </DialogContent>
      <DialogActions>
        <Button onClick={dismiss} autoFocus>
          {translate('content.notice_close')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
