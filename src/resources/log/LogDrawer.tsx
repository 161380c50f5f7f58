// One log row in full, in a drawer over the list: what the request was, every
// channel tried, the tokens, the prices and the charge's computation with its
// numbers (in dollars when quota shows in dollars, the ratios and the quota
// behind a toggle; in quota units otherwise), and the timing. Rows written before the gateway kept details (and
// rows that are not relays) carry only some of this: what is absent is left out,
// and a failed call that was never billed shows no tokens or price.
import ExpandLessIcon from '@mui/icons-material/ExpandLess';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import { Box, Button, Chip, Link, Table, TableBody, TableCell, TableContainer, TableHead, TableRow, Typography } from '@mui/material';
import { useEffect, useId, useState } from 'react';
import { useDataProvider, useTranslate, type RaRecord, type TranslateFunction } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import type { ClientStatus } from '../../../common/options';
import type { LogDetails } from '../../../common/records';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useStatus } from '../../layout/status';
import { formatQuota, quotaUnit } from '../../quota';
import { DetailDrawer, DrawerSection } from '../shared/DetailDrawer';
import { Facts, RequestId, type Fact } from '../shared/DrawerFacts';
import { formatTimestamp } from '../shared/TimestampField';
import { logText } from './logContent';
import { costAmount, costLines, pricePerMillion, type CostLine } from './logCost';
import { channelLabel } from './LogFields';

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** The details object, or an empty one when the row has none (or the server sent something else). */
export function detailsOf(record: RaRecord | undefined): LogDetails {
  const details: unknown = record?.details;
  return details && typeof details === 'object' && !Array.isArray(details) ? details : {};
}

/** The TraceLinkTemplate option (admins may read it; others see the id alone), or '' when unset or unreadable. */
function useTraceLinkTemplate(admin: boolean): string {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const [template, setTemplate] = useState('');
  useEffect(() => {
    if (!admin) return undefined;
    let live = true;
    dataProvider.getOptions().then(
      (rows) => {
        if (live) setTemplate(rows.find((row) => row.key === 'TraceLinkTemplate')?.value ?? '');
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [admin, dataProvider]);
  return template;
}

/** A call's trace id, linked to the operator's tracing system when TraceLinkTemplate names it. */
function TraceId({ traceId, admin }: { traceId: string; admin: boolean }) {
  const translate = useTranslate();
  const template = useTraceLinkTemplate(admin);
  const code = (
    <Box component="code" sx={{ fontFamily: 'monospace', userSelect: 'all', overflowWrap: 'anywhere' }}>
      {traceId}
    </Box>
  );
  if (!template.includes('{trace_id}')) return code;
  return (
    <Link
      href={template.replaceAll('{trace_id}', encodeURIComponent(traceId))}
      target="_blank"
      rel="noopener noreferrer"
      aria-label={translate('app.log.drawer.open_trace')}
    >
      {code}
    </Link>
  );
}

/** Each channel tried; a user (who is never shown channels) sees the tries numbered instead. */
function Attempts({ attempts, admin }: { attempts: NonNullable<LogDetails['attempts']>; admin: boolean }) {
  const translate = useTranslate();
  const title = translate('app.log.drawer.attempts');
  return (
    <TableContainer sx={{ overflowX: 'auto' }}>
      <Table size="small" aria-label={title}>
        <TableHead>
          <TableRow>
            <TableCell>{translate(admin ? 'app.log.drawer.attempt_channel' : 'app.log.drawer.attempt_number')}</TableCell>
            <TableCell align="right">{translate('app.log.drawer.attempt_status')}</TableCell>
            <TableCell>{translate('app.log.drawer.attempt_reason')}</TableCell>
            <TableCell align="right">{translate('app.log.drawer.attempt_ms')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {attempts.map((attempt, index) => (
            <TableRow key={index}>
              <TableCell sx={{ overflowWrap: 'anywhere' }}>
                {admin ? attempt.channelName || (attempt.channelId ? `#${attempt.channelId}` : '–') : index + 1}
              </TableCell>
              <TableCell align="right" sx={{ color: attempt.status >= 400 ? 'error.main' : undefined, fontVariantNumeric: 'tabular-nums' }}>
                {attempt.status || '–'}
              </TableCell>
              <TableCell sx={{ overflowWrap: 'anywhere', minWidth: 120 }}>{attempt.reason || '–'}</TableCell>
              <TableCell align="right" sx={{ fontVariantNumeric: 'tabular-nums' }}>
                {isNumber(attempt.ms) ? attempt.ms : '–'}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

/** Per log type, its label key and chip colour (the list's). */
type TypeLabels = Record<number, readonly [string, string]>;

interface DrawerProps {
  admin: boolean;
  typeLabels: TypeLabels;
  /** Decimals of a dollar amount, as the list shows quota. */
  quotaDigits: number;
}

/** What every section's facts are read from. */
interface FactSource {
  record: RaRecord;
  details: LogDetails;
  admin: boolean;
  translate: TranslateFunction;
  status: ClientStatus | null;
}

const count = (value: unknown) => (isNumber(value) ? value.toLocaleString('en-US') : undefined);
const ratio = (value: unknown) => (isNumber(value) ? String(value) : undefined);

/** The summary: when, what type, which request, protocol, model, channel (admins), user, token, stream, status, content. */
function summaryFacts({ record, details, admin, translate, status }: FactSource, typeLabels: TypeLabels): Fact[] {
  const [typeLabel, typeColor] = typeLabels[Number(record.type)] ?? ['status.log.unknown', 'default'];
  const requestId = typeof record.request_id === 'string' ? record.request_id : '';
  const channel = channelLabel(record);
  const channelId = Number(record.channel_id ?? 0);
  const protocol = [details.protocol, details.operation].filter(Boolean).join(' · ');
  return [
    ['resources.log.fields.created_at', record.created_at ? formatTimestamp(Number(record.created_at)) : undefined],
    ['resources.log.fields.type', <Chip size="small" variant="outlined" color={typeColor as 'default'} label={translate(typeLabel)} />],
    [
      'resources.log.fields.request_id',
      requestId ? <RequestId requestId={requestId} copyLabel="app.log.drawer.copy_request_id" /> : undefined,
    ],
    ['app.log.drawer.trace_id', details.traceId ? <TraceId traceId={details.traceId} admin={admin} /> : undefined],
    ['app.log.drawer.protocol', protocol],
    ['resources.log.fields.model_name', record.model_name ? String(record.model_name) : undefined],
    ['app.log.drawer.fallback_model', details.fallbackModel],
    [
      'resources.log.fields.channel_id',
      admin && channel ? (
        <Link component={RouterLink} to={`/channel/edit/${channelId}`}>
          {channel}
        </Link>
      ) : undefined,
    ],
    ['resources.log.fields.username', admin && record.username ? String(record.username) : undefined],
    ['resources.log.fields.token_name', record.token_name ? String(record.token_name) : undefined],
    [
      'resources.log.fields.is_stream',
      record.type === 2 || record.type === 5 || record.is_stream
        ? translate(record.is_stream ? 'ra.boolean.true' : 'ra.boolean.false')
        : undefined,
    ],
    ['app.log.drawer.http_status', isNumber(details.status) ? String(details.status) : undefined],
    ['app.log.drawer.error_code', details.errorCode ? <code>{details.errorCode}</code> : undefined],
    ['resources.log.fields.content', record.content ? logText(String(record.content), status, translate) : undefined],
  ];
}

/** The tokens: prompt, completion, cached, cache-written, reasoning. */
function tokenFacts({ record, details }: FactSource): Fact[] {
  return [
    ['resources.log.fields.prompt_tokens', count(record.prompt_tokens)],
    ['resources.log.fields.completion_tokens', count(record.completion_tokens)],
    ['app.log.drawer.cached_tokens', count(details.cachedTokens)],
    ['app.log.drawer.cache_write_tokens', count(details.cacheWriteTokens)],
    ['app.log.drawer.reasoning_tokens', count(details.reasoningTokens)],
  ];
}

/** The ratios a charge was made with. */
function ratioFacts({ details }: FactSource): Fact[] {
  return [
    ['app.log.drawer.model_ratio', ratio(details.modelRatio)],
    ['app.log.drawer.completion_ratio', ratio(details.completionRatio)],
    ['app.log.drawer.group_ratio', ratio(details.groupRatio)],
    ['app.log.drawer.cache_ratio', ratio(details.cacheRatio)],
  ];
}

/** The timing: elapsed, time to first token, retries. */
function timingFacts({ record, details, translate }: FactSource): Fact[] {
  const milliseconds = (value: unknown) =>
    isNumber(value) && value > 0 ? translate('app.log.drawer.ms', { ms: value.toLocaleString('en-US') }) : undefined;
  return [
    ['resources.log.fields.elapsed_ms', milliseconds(record.elapsed_ms)],
    ['app.log.drawer.ttft', milliseconds(details.ttftMs)],
    ['app.log.drawer.retries', isNumber(details.retries) && details.retries > 0 ? String(details.retries) : undefined],
  ];
}

/** The quota computation written out with its numbers. */
function Formula({ formula, title = 'app.log.drawer.formula' }: { formula: string; title?: string }) {
  const translate = useTranslate();
  return (
    <Box sx={{ mt: 1.5 }}>
      <Typography variant="body2" component="h4" sx={{ fontWeight: 600, mb: 0.5 }}>
        {translate(title)}
      </Typography>
      <Box
        component="code"
        data-testid="log-formula"
        sx={{
          display: 'block',
          p: 1,
          borderRadius: 1,
          bgcolor: 'action.hover',
          fontFamily: 'monospace',
          fontSize: 13,
          whiteSpace: 'pre-wrap',
          overflowWrap: 'anywhere',
        }}
      >
        {formula}
      </Box>
    </Box>
  );
}

/** A charge in dollars, line by line ("1,200 input tokens × $2.50 / 1M = $0.0030"), then the total charged. */
function CostExplanation({ lines, quota, status }: { lines: CostLine[]; quota: number; status: ClientStatus | null }) {
  const translate = useTranslate();
  const { perUnit } = quotaUnit(status);
  return (
    <Box sx={{ mt: 1.5 }}>
      <Typography variant="body2" component="h4" sx={{ fontWeight: 600, mb: 0.5 }}>
        {translate('app.log.drawer.formula')}
      </Typography>
      <Box component="ul" data-testid="log-cost" sx={{ m: 0, p: 0, listStyle: 'none', fontVariantNumeric: 'tabular-nums' }}>
        {lines.map((line) => (
          <Typography component="li" variant="body2" key={line.kind}>
            {translate(`app.log.drawer.cost_${line.kind}`, {
              smart_count: line.tokens,
              tokens: line.tokens.toLocaleString('en-US'),
              price: pricePerMillion(line.perToken, perUnit),
              amount: costAmount(line.quota, status),
            })}
          </Typography>
        ))}
        <Typography component="li" variant="body2" sx={{ fontWeight: 600 }}>
          {translate('app.log.drawer.cost_total', { amount: costAmount(quota, status) })}
        </Typography>
      </Box>
    </Box>
  );
}

/**
 * The price. In dollars (display_in_currency): the cost, the charge line by
 * line, and the ratios, the quota and its formula behind "Show ratios". In
 * quota units (the operator's choice): the ratios, the quota and its formula.
 */
function Price({ source, quotaDigits }: { source: FactSource; quotaDigits: number }) {
  const { record, details, translate, status } = source;
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const quota = Number(record.quota ?? 0);
  if (!quotaUnit(status).inCurrency)
    return (
      <>
        <Facts facts={[...ratioFacts(source), ['resources.log.fields.quota', formatQuota(quota, status)]]} />
        {details.formula && <Formula formula={details.formula} />}
      </>
    );
  const lines = costLines(record, details);
  return (
    <>
      <Facts facts={[['app.log.drawer.cost', formatQuota(quota, status, quotaDigits)]]} />
      {lines && <CostExplanation lines={lines} quota={quota} status={status} />}
      <Button
        size="small"
        onClick={() => setOpen(!open)}
        aria-expanded={open}
        aria-controls={panelId}
        endIcon={open ? <ExpandLessIcon /> : <ExpandMoreIcon />}
        sx={{ mt: 1, ml: -0.5 }}
      >
        {translate(open ? 'app.log.drawer.hide_ratios' : 'app.log.drawer.show_ratios')}
      </Button>
      <Box id={panelId} hidden={!open} sx={{ mt: 1 }}>
        {open && (
          <>
            <Facts facts={[...ratioFacts(source), ['resources.log.fields.quota', translate('app.log.drawer.raw_quota', { quota })]]} />
            {details.formula && (
              <Formula formula={details.formula} title={lines ? 'app.log.drawer.formula_quota' : 'app.log.drawer.formula'} />
            )}
          </>
        )}
      </Box>
    </>
  );
}

/**
 * Whether the tokens and the price sections mean something for this row: a relayed
 * request has both; a failed one (type 5) only the tokens it counted and the
 * quota it was charged, so a call that was never billed shows neither.
 */
function billingSections(record: RaRecord, details: LogDetails): { tokens: boolean; price: boolean } {
  const quota = Number(record.quota ?? 0);
  const attempts = Array.isArray(details.attempts) ? details.attempts : [];
  const relayed = record.type === 2 || record.type === 5 || attempts.length > 0;
  if (record.type !== 5) return { tokens: relayed, price: relayed || quota !== 0 };
  const counts = [record.prompt_tokens, record.completion_tokens, details.cachedTokens, details.cacheWriteTokens, details.reasoningTokens];
  return { tokens: counts.some((value) => isNumber(value) && value !== 0), price: quota !== 0 };
}

function LogDetailsBody({ record, admin, typeLabels, quotaDigits }: DrawerProps & { record: RaRecord }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const details = detailsOf(record);
  const source: FactSource = { record, details, admin, translate, status };
  const attempts = Array.isArray(details.attempts) ? details.attempts : [];
  const timing = timingFacts(source);
  const shown = billingSections(record, details);
  const timed = timing.some(([, value]) => value !== undefined);

  return (
    <>
      <DrawerSection title={translate('app.log.drawer.summary')}>
        <Facts facts={summaryFacts(source, typeLabels)} />
      </DrawerSection>
      {attempts.length > 0 && (
        <DrawerSection title={translate('app.log.drawer.attempts')}>
          <Attempts attempts={attempts} admin={admin} />
        </DrawerSection>
      )}
      {shown.tokens && (
        <DrawerSection title={translate('app.log.drawer.tokens')}>
          <Facts facts={tokenFacts(source)} />
        </DrawerSection>
      )}
      {shown.price && (
        <DrawerSection title={translate('app.log.drawer.price')}>
          <Price key={String(record.id)} source={source} quotaDigits={quotaDigits} />
        </DrawerSection>
      )}
      {timed && (
        <DrawerSection title={translate('app.log.drawer.timing')}>
          <Facts facts={timing} />
        </DrawerSection>
      )}
    </>
  );
}

/** The drawer for `record` (closed when there is none); Esc, the backdrop and the close button close it. */
export function LogDrawer({ record, onClose, ...props }: DrawerProps & { record: RaRecord | undefined; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <DetailDrawer
      open={Boolean(record)}
      onClose={onClose}
      title={translate('app.log.drawer.title')}
      closeLabel={translate('app.log.drawer.close')}
      width={520}
      testId="log-drawer"
    >
      {record && <LogDetailsBody record={record} {...props} />}
    </DetailDrawer>
  );
}
