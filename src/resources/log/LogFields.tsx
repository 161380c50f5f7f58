// The log table's cells beyond plain text: token counts (with the mark for
// counts the gateway estimated), latency, the stream flag, the channel link (by name), and
// the details (the log's text and the request id).
import { Box, Chip, Link, Tooltip, Typography } from '@mui/material';
import { useRecordContext, useTranslate, type RaRecord } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { useStatus } from '../../layout/status';
import { logText } from './logContent';

interface CellProps {
  label?: string;
  sortBy?: string;
  sortable?: boolean;
}

/** Prompt or completion tokens; "≈" when the upstream reported no usage and the gateway counted. */
export function TokensField({ source }: CellProps & { source: 'prompt_tokens' | 'completion_tokens' }) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  const count = Number(record[source] ?? 0);
  if (!record.estimated) return <span>{count}</span>;
  return (
    <Tooltip title={translate('app.log.estimated_help')}>
      <span aria-label={translate('app.log.estimated')}>≈ {count}</span>
    </Tooltip>
  );
}

export function LatencyField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  const milliseconds = Number(record?.elapsed_ms ?? 0);
  return <span>{milliseconds ? translate('app.channel.seconds', { seconds: (milliseconds / 1000).toFixed(2) }) : ''}</span>;
}

export function StreamField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record?.is_stream) return null;
  return <Chip size="small" variant="outlined" label={translate('app.log.stream')} />;
}

/** The row's channel by name ("openai-main"; its id is in the link's title); "#id" when the name is unknown (old rows, deleted channels). */
export function channelLabel(record: RaRecord): string {
  const name = typeof record.channel_name === 'string' ? record.channel_name.trim() : '';
  const id = Number(record.channel_id ?? 0);
  if (!id) return name;
  return name || `#${id}`;
}

/** The channel a request went through, by name when the row has it, opening that channel (admins). */
export function ChannelIdField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  const id = Number(record?.channel_id ?? 0);
  if (!record || !id) return null;
  return (
    <Link
      component={RouterLink}
      to={`/channel/edit/${id}`}
      variant="body2"
      title={translate('app.lists.open_channel', { id })}
      onClick={(event) => event.stopPropagation()}
    >
      {channelLabel(record)}
    </Link>
  );
}

/**
 * The log's text in the console's language where its shape is known (logContent.ts), its "N quota" amounts in the unit quota is shown in elsewhere (dollars, the raw quota beside),
 * and under it the relayed request's X-Request-Id, to match the row with the client's and the upstream's logs.
 */
export function LogContentField(_: CellProps & { source?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { status } = useStatus();
  const requestId = typeof record?.request_id === 'string' ? record.request_id : '';
  return (
    <>
      <span>{logText(String(record?.content ?? ''), status, translate)}</span>
      {requestId && <RequestIdLine requestId={requestId} />}
    </>
  );
}

function RequestIdLine({ requestId }: { requestId: string }) {
  const translate = useTranslate();
  const label = translate('resources.log.fields.request_id');
  return (
    <Typography
      component="span"
      variant="caption"
      color="text.secondary"
      sx={{ display: 'block', overflowWrap: 'anywhere' }}
      aria-label={`${label} ${requestId}`}
    >
      {label}:{' '}
      <Box component="code" sx={{ fontFamily: 'monospace', userSelect: 'all' }}>
        {requestId}
      </Box>
    </Typography>
  );
}
