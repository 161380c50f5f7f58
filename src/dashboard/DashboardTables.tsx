// The dashboard's ranked tables (top tokens, users, models, channels) and the
// admin's channel health. A row's name narrows the dashboard to it.
import {
  Box,
  Card,
  CardContent,
  Link,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import type { ReactNode } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import type { LogFilter } from '../../common/records';
import type { ChannelHealth, ChannelUsage, ModelUsage, TokenUsage, UsageTotals, UserUsage } from '../../common/dashboard';
import { useDashboardFormat } from './format';
import { useDashboardTranslate } from './useDashboardTranslate';

export interface Column<Row> {
  key: string;
  label: string;
  numeric?: boolean;
  render(row: Row): ReactNode;
}

/** A titled card around content; its heading names the region for screen readers. */
export function SectionCard({ id, title, children, action }: { id: string; title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Card
      variant="outlined"
      sx={{ borderRadius: 3, height: '100%', minWidth: 0 }}
      component="section"
      aria-labelledby={`section-${id}`}
      data-testid={`section-${id}`}
    >
      <CardContent sx={{ p: { xs: 1.5, sm: 2.5 }, '&:last-child': { pb: { xs: 1.5, sm: 2.5 } } }}>
        <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between', gap: 1, mb: 1.5, flexWrap: 'wrap' }}>
          <Typography id={`section-${id}`} variant="h6" component="h2" sx={{ fontWeight: 700, fontSize: 17 }}>
            {title}
          </Typography>
          {action}
        </Stack>
        {children}
      </CardContent>
    </Card>
  );
}

/** A compact table that scrolls sideways inside its card on narrow screens (never the page). */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  label,
}: {
  rows: Row[];
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  label: string;
}) {
  const translate = useDashboardTranslate();
  if (rows.length === 0) {
    return (
      <Typography variant="body2" color="text.secondary">
        {translate('dashboard.tables.none')}
      </Typography>
    );
  }
  return (
    <TableContainer sx={{ overflowX: 'auto', maxWidth: '100%' }}>
      <Table size="small" aria-label={label}>
        <TableHead>
          <TableRow>
            {columns.map((column) => (
              <TableCell
                key={column.key}
                align={column.numeric ? 'right' : 'left'}
                sx={{ fontWeight: 600, whiteSpace: 'nowrap', color: 'text.secondary', px: { xs: 1, sm: 2 } }}
              >
                {column.label}
              </TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.map((row) => (
            <TableRow key={rowKey(row)} hover>
              {columns.map((column) => (
                <TableCell
                  key={column.key}
                  align={column.numeric ? 'right' : 'left'}
                  sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums', px: { xs: 1, sm: 2 } }}
                >
                  {column.render(row)}
                </TableCell>
              ))}
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

/** An error rate from 5 % in red (MUI's amber is too faint for text on white, so lower rates stay plain). */
const errorRateSx = (rate: number) => (rate >= 0.05 ? { color: 'error.main', fontWeight: 600 } : {});

/** A row's name that narrows the dashboard to that row. */
function FilterLink({ name, onFilter }: { name: string; onFilter?: () => void }) {
  const translate = useDashboardTranslate();
  if (!onFilter) return <>{name}</>;
  return (
    <Link
      component="button"
      type="button"
      underline="hover"
      onClick={onFilter}
      title={translate('dashboard.tables.filter_by', { name })}
      sx={{ fontSize: 'inherit', textAlign: 'left' }}
    >
      {name}
    </Link>
  );
}

/** Where a count of failed requests leads: the log's error rows behind it (narrowed by `filter`). */
export type ErrorLogPath = (filter?: LogFilter) => string;

/** A count of failed requests, opening the log at those rows; zero is plain text. */
export function ErrorsLink({ count, to, children }: { count: number; to: string; children?: ReactNode }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const text = children ?? format.count(count);
  if (count <= 0) return <>{text}</>;
  return (
    <Link
      component={RouterLink}
      to={to}
      underline="always"
      color="error"
      title={translate('dashboard.errors_link', { count: format.count(count) })}
      data-testid="errors-link"
    >
      {text}
    </Link>
  );
}

/** Requests, tokens and spend: the columns every usage table ends with. */
function useUsageColumns<Row extends UsageTotals>(): Column<Row>[] {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  return [
    { key: 'requests', label: translate('dashboard.tables.requests'), numeric: true, render: (row) => format.count(row.requests) },
    {
      key: 'tokens',
      label: translate('dashboard.tables.tokens'),
      numeric: true,
      render: (row) => format.count(row.prompt_tokens + row.completion_tokens),
    },
    { key: 'spend', label: translate('dashboard.tables.spend'), numeric: true, render: (row) => format.money(row.quota) },
  ];
}

/** A ranked table of things that have an id and a name that may be gone (tokens, users). */
function NamedUsageTable<Row extends UsageTotals>({
  id,
  title,
  nameLabel,
  rows,
  idOf,
  nameOf,
  onFilter,
}: {
  id: string;
  title: string;
  nameLabel: string;
  rows: Row[];
  idOf: (row: Row) => number;
  nameOf: (row: Row) => string;
  onFilter: (id: number) => void;
}) {
  const translate = useDashboardTranslate();
  const usage = useUsageColumns<Row>();
  const columns: Column<Row>[] = [
    {
      key: 'name',
      label: nameLabel,
      render: (row) => (
        <FilterLink name={nameOf(row) || translate('dashboard.tables.deleted', { id: idOf(row) })} onFilter={() => onFilter(idOf(row))} />
      ),
    },
    ...usage,
  ];
  return (
    <SectionCard id={id} title={title}>
      <DataTable rows={rows} columns={columns} rowKey={(row) => String(idOf(row))} label={title} />
    </SectionCard>
  );
}

export function TopTokensTable({ rows, onFilter }: { rows: TokenUsage[]; onFilter: (tokenId: number) => void }) {
  const translate = useDashboardTranslate();
  return (
    <NamedUsageTable
      id="top-tokens"
      title={translate('dashboard.tables.top_tokens')}
      nameLabel={translate('dashboard.tables.token')}
      rows={rows}
      idOf={(row) => row.token_id}
      nameOf={(row) => row.token_name}
      onFilter={onFilter}
    />
  );
}

export function TopUsersTable({ rows, onFilter }: { rows: UserUsage[]; onFilter: (userId: number) => void }) {
  const translate = useDashboardTranslate();
  return (
    <NamedUsageTable
      id="top-users"
      title={translate('dashboard.tables.top_users')}
      nameLabel={translate('dashboard.tables.user')}
      rows={rows}
      idOf={(row) => row.user_id}
      nameOf={(row) => row.username}
      onFilter={onFilter}
    />
  );
}

export function TopModelsTable({
  rows,
  totalQuota,
  onFilter,
}: {
  rows: ModelUsage[];
  totalQuota: number;
  onFilter: (model: string) => void;
}) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const usage = useUsageColumns<ModelUsage>();
  const title = translate('dashboard.tables.top_models');
  const columns: Column<ModelUsage>[] = [
    {
      key: 'model',
      label: translate('dashboard.tables.model'),
      render: (row) => <FilterLink name={row.model} onFilter={() => onFilter(row.model)} />,
    },
    ...usage,
    {
      key: 'share',
      label: translate('dashboard.tables.share'),
      numeric: true,
      render: (row) => (totalQuota > 0 ? format.percent(row.quota / totalQuota) : '–'),
    },
  ];
  return (
    <SectionCard id="top-models" title={title}>
      <DataTable rows={rows} columns={columns} rowKey={(row) => row.model} label={title} />
    </SectionCard>
  );
}

export function TopChannelsTable({
  rows,
  onFilter,
  errorLog,
}: {
  rows: ChannelUsage[];
  onFilter: (channelId: number) => void;
  errorLog: ErrorLogPath;
}) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const title = translate('dashboard.tables.top_channels');
  const columns: Column<ChannelUsage>[] = [
    {
      key: 'channel',
      label: translate('dashboard.tables.channel'),
      render: (row) => (
        <FilterLink
          name={row.channel_name || translate('dashboard.tables.deleted', { id: row.channel_id })}
          onFilter={() => onFilter(row.channel_id)}
        />
      ),
    },
    { key: 'requests', label: translate('dashboard.tables.requests'), numeric: true, render: (row) => format.count(row.requests) },
    {
      key: 'errors',
      label: translate('dashboard.tables.errors'),
      numeric: true,
      render: (row) => <ErrorsLink count={row.errors} to={errorLog({ channel: row.channel_id })} />,
    },
    {
      key: 'error_rate',
      label: translate('dashboard.tables.error_rate'),
      numeric: true,
      render: (row) => (
        <Box component="span" sx={errorRateSx(row.error_rate)}>
          {format.percent(row.error_rate)}
        </Box>
      ),
    },
    { key: 'p50', label: translate('dashboard.tables.latency_p50'), numeric: true, render: (row) => format.latency(row.latency_p50_ms) },
    { key: 'p95', label: translate('dashboard.tables.latency_p95'), numeric: true, render: (row) => format.latency(row.latency_p95_ms) },
    { key: 'spend', label: translate('dashboard.tables.spend'), numeric: true, render: (row) => format.money(row.quota) },
  ];
  return (
    <SectionCard id="top-channels" title={title}>
      <DataTable rows={rows} columns={columns} rowKey={(row) => String(row.channel_id)} label={title} />
    </SectionCard>
  );
}

export function ChannelHealthCard({ health }: { health: ChannelHealth }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const counts = [
    { key: 'enabled', value: health.enabled, color: 'success.main' },
    { key: 'auto_disabled', value: health.auto_disabled, color: 'error.main' },
    { key: 'manually_disabled', value: health.manually_disabled, color: 'text.disabled' },
    { key: 'untested', value: health.untested, color: 'warning.main' },
  ];
  const title = translate('dashboard.health.title');
  return (
    <SectionCard id="channel-health" title={title}>
      <Box
        component="dl"
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', sm: 'repeat(4, minmax(0, 1fr))' },
          gap: 1.5,
          m: 0,
          mb: 2,
        }}
      >
        {counts.map((count) => (
          <Box key={count.key} sx={{ border: 1, borderColor: 'divider', borderRadius: 2, p: 1.5 }} data-testid={`health-${count.key}`}>
            <Typography component="dt" variant="body2" color="text.secondary" sx={{ display: 'flex', alignItems: 'center', gap: 0.75 }}>
              <Box component="span" aria-hidden sx={{ width: 10, height: 10, borderRadius: '50%', bgcolor: count.color, flex: 'none' }} />
              {translate(`dashboard.health.${count.key}`)}
            </Typography>
            <Typography component="dd" variant="h5" sx={{ m: 0, fontWeight: 700 }}>
              {format.count(count.value)}
            </Typography>
          </Box>
        ))}
      </Box>
      <Typography variant="subtitle2" component="h3" sx={{ mb: 1 }}>
        {translate('dashboard.health.slowest')}
      </Typography>
      {health.slowest.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {translate('dashboard.health.none')}
        </Typography>
      ) : (
        <DataTable
          rows={health.slowest}
          rowKey={(row) => String(row.channel_id)}
          label={translate('dashboard.health.slowest')}
          columns={[
            {
              key: 'channel',
              label: translate('dashboard.tables.channel'),
              render: (row) => row.channel_name || translate('dashboard.tables.deleted', { id: row.channel_id }),
            },
            {
              key: 'time',
              label: translate('dashboard.health.response_time'),
              numeric: true,
              render: (row) => format.latency(row.response_time_ms),
            },
            {
              key: 'tested',
              label: translate('dashboard.health.tested_at'),
              numeric: true,
              render: (row) => (row.test_time ? format.dateTime(row.test_time) : '–'),
            },
          ]}
        />
      )}
    </SectionCard>
  );
}
