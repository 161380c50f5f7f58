// The log table's cells beyond plain text: token counts (with the mark for
// counts the gateway estimated), latency and the stream flag.
import { Chip, Tooltip } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';
import { useStatus } from '../../layout/status';
import { quotaInText } from '../../quota';

interface CellProps {
  label?: string;
  sortBy?: string;
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

export function ChannelIdField(_: CellProps) {
  const record = useRecordContext();
  const id = Number(record?.channel_id ?? 0);
  return <span>{id ? `#${id}` : ''}</span>;
}

/** The log's text, its "N quota" amounts in the unit quota is shown in elsewhere (dollars, the raw quota beside). */
export function LogContentField(_: CellProps & { source?: string }) {
  const record = useRecordContext();
  const { status } = useStatus();
  return <span>{quotaInText(String(record?.content ?? ''), status)}</span>;
}
