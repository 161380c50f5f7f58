// What the log's and the task's drawers show alike: label and value pairs in a
// description list, and a request id copied in a click.
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { Box, IconButton, Tooltip, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import { useNotice } from '../../layout/notice';
import { copyText } from './clipboard';

export type Fact = [label: string, value: ReactNode];

/** Label and value pairs; the ones without a value are not shown. */
export function Facts({ facts }: { facts: Fact[] }) {
  const translate = useTranslate();
  const shown = facts.filter(([, value]) => value !== undefined && value !== null && value !== '');
  return (
    <Box
      component="dl"
      sx={{ display: 'grid', gridTemplateColumns: 'minmax(7rem, max-content) minmax(0, 1fr)', columnGap: 2, rowGap: 0.75, m: 0 }}
    >
      {shown.map(([label, value]) => (
        <Box key={label} sx={{ display: 'contents' }}>
          <Typography component="dt" variant="body2" color="text.secondary">
            {translate(label)}
          </Typography>
          <Typography component="dd" variant="body2" sx={{ m: 0, overflowWrap: 'anywhere', fontVariantNumeric: 'tabular-nums' }}>
            {value}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

/** A request id in monospace with a copy button named by `copyLabel` (a translation key). */
export function RequestId({ requestId, copyLabel }: { requestId: string; copyLabel: string }) {
  const translate = useTranslate();
  const notice = useNotice();
  const copy = async () => {
    if (await copyText(requestId)) notice('app.common.copied', 'success');
    else notice('app.errors.copy_manually', 'warning', { value: requestId });
  };
  return (
    <Box component="span" sx={{ display: 'inline-flex', alignItems: 'center', gap: 0.5, maxWidth: '100%' }}>
      <Box component="code" sx={{ fontFamily: 'monospace', userSelect: 'all', overflowWrap: 'anywhere' }}>
        {requestId}
      </Box>
      <Tooltip title={translate(copyLabel)}>
        <IconButton size="small" onClick={() => void copy()} aria-label={translate(copyLabel)}>
          <ContentCopyIcon fontSize="inherit" />
        </IconButton>
      </Tooltip>
    </Box>
  );
}
