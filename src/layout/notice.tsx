// Notices with the spec's durations (success 1.5 s, info 3 s, error 5 s,
// warning 10 s), shown top-centre on screens 600 px wide or narrower.
import { useMediaQuery } from '@mui/material';
import { useCallback } from 'react';
import { Notification, useNotify, type NotificationProps } from 'react-admin';

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
