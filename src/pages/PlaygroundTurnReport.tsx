// The line under each answer of the playground (PlaygroundConversation.tsx):
// the tokens in, out and cached, what the gateway billed (in the display
// currency, from the log row), the time to the first token and in all, and a
// link to the log row of the request. Until the log row is read the stream's
// own token counts stand in, and the cost says it is being read.
import { Box, Link, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { useStatus } from '../layout/status';
import { formatQuota } from '../quota';
import { logListPath } from '../resources/log/logLink';
import type { TurnReport } from './playgroundTurns';

const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** The tokens to show: the billed ones once read, else the stream's. */
function tokensOf(report: TurnReport) {
  if (report.billed && report.billed !== 'pending') return report.billed;
  return report.usage;
}

/** The cost as a sentence part: the billed amount, or that it is being read, or that the log did not have it. */
function useCost(report: TurnReport): string {
  const translate = useTranslate();
  const { status } = useStatus();
  if (report.billed === 'pending') return translate('playground.report.cost_pending');
  if (report.billed === null) return translate('playground.report.cost_unknown');
  return translate('playground.report.cost', { amount: formatQuota(report.billed.quota, status) });
}

/** The report of a call; `failed` leaves out the tokens and cost (a refused call bills nothing) but keeps the time and the log link. */
export function TurnReportLine({ report, failed = false }: { report: TurnReport; failed?: boolean }) {
  const translate = useTranslate();
  const cost = useCost(report);
  const tokens = tokensOf(report);
  const parts = [
    ...(!failed && tokens
      ? [
          translate('playground.report.input', { count: tokens.promptTokens }),
          translate('playground.report.output', { count: tokens.completionTokens }),
          translate('playground.report.cached', { count: tokens.cachedTokens }),
        ]
      : []),
    ...(failed ? [] : [cost]),
    ...(report.firstTokenMs === undefined ? [] : [translate('playground.report.first_token', { value: seconds(report.firstTokenMs) })]),
    ...(report.totalMs > 0 ? [translate('playground.report.total', { value: seconds(report.totalMs) })] : []),
  ];
  return (
    <Box
      data-testid="turn-report"
      aria-label={translate('playground.report.label')}
      role="group"
      sx={{ display: 'flex', flexWrap: 'wrap', columnGap: 1.5, rowGap: 0.25, mt: 0.5, px: 0.5 }}
    >
      {parts.map((part) => (
        <Typography key={part} variant="caption" color="text.secondary" sx={{ whiteSpace: 'nowrap' }}>
          {part}
        </Typography>
      ))}
      {report.requestId && (
        <Link component={RouterLink} to={logListPath({ request_id: report.requestId })} variant="caption">
          {translate('playground.report.log_link')}
        </Link>
      )}
    </Box>
  );
}
