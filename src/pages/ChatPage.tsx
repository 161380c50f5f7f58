import { Alert, Box } from '@mui/material';
import { useTranslate } from 'react-admin';
import { isSafeLink } from '../../common/options';
import { useStatus } from '../layout/status';

/** /chat: the configured chat link in a full-page frame, under the top menu. */
export default function ChatPage() {
  const translate = useTranslate();
  const { status } = useStatus();
  const link = status?.chat_link || localStorage.getItem('chat_link') || '';
  if (!link) return <Alert severity="info">{translate('app.chat.not_set')}</Alert>;
  // defence in depth: a javascript: frame would run in this origin (the server already refuses such links)
  if (!isSafeLink(link)) return <Alert severity="warning">{translate('content.chat_unsafe')}</Alert>;
  return (
    <Box
      component="iframe"
      src={link}
      title={translate('app.menu.chat')}
      sx={{ border: 0, width: '100%', height: 'calc(100vh - 180px)', borderRadius: 2 }}
    />
  );
}
