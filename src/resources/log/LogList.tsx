// /log: admins read everyone's logs (with a username filter and column),
// others their own. The window defaults to epoch 0 .. an hour from now,
// fixed when the page opens; the line above the table sums the quota spent
// within the filters.
import { Box, Typography } from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import {
  Datagrid, List, SelectInput, TextField, TextInput, useDataProvider, useListContext, useTranslate,
} from 'react-admin';
import { isAdmin } from '../../../common/roles';
import { readStoredUser } from '../../authProvider/storage';
import type { LogFilter, SwitchboardDataProvider } from '../../dataProvider';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../pages/errorMessage';
import { formatCount, formatQuota } from '../../quota';
import { listDefaults } from '../shared/ListFrame';
import { QuotaField } from '../shared/QuotaField';
import { StatusChip } from '../shared/StatusChip';
import { formatTimestamp, TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { ChannelIdField, LatencyField, LogContentField, StreamField, TokensField } from './LogFields';

const LOG_TYPE = {
  1: ['status.log.topup', 'success'],
  2: ['status.log.consume', 'info'],
  3: ['status.log.manage', 'warning'],
  4: ['status.log.system', 'secondary'],
} as const;

// one request costs fractions of a cent: rows and their sum show six decimals
const QUOTA_DIGITS = 6;

// "all" (0) is the empty choice: no type filter
const TYPE_CHOICES = [
  { id: 1, name: 'status.log.topup' },
  { id: 2, name: 'status.log.consume' },
  { id: 3, name: 'status.log.manage' },
  { id: 4, name: 'status.log.system' },
];

/** Epoch seconds ↔ the value of an <input type="datetime-local"> (local time, minutes). */
const toLocalInput = (seconds: unknown) => (Number(seconds) > 0 ? formatTimestamp(Number(seconds)).replace(' ', 'T').slice(0, 16) : '');
const fromLocalInput = (text: string) => {
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : Math.floor(parsed / 1000);
};

function DateTimeFilter({ source, label }: { source: string; label: string; alwaysOn?: boolean }) {
  return (
    <TextInput
      source={source}
      label={label}
      type="datetime-local"
      format={toLocalInput}
      parse={fromLocalInput}
      slotProps={{ inputLabel: { shrink: true } }}
      helperText={false}
    />
  );
}

function LogStat({ admin }: { admin: boolean }) {
  const { filterValues } = useListContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const translate = useTranslate();
  const { status } = useStatus();
  const [stat, setStat] = useState<{ quota: number; token: number } | string | null>(null);
  const key = JSON.stringify(filterValues);
  useEffect(() => {
    let live = true;
    dataProvider.logStat(JSON.parse(key) as LogFilter, admin).then(
      (result) => live && setStat(result),
      (error) => live && setStat(errorMessage(error)),
    );
    return () => {
      live = false;
    };
  }, [dataProvider, key, admin]);
  return (
    <Box sx={{ px: 2, py: 1.5, borderBottom: 1, borderColor: 'divider' }} data-testid="log-stat">
      <Typography variant="body2" color={typeof stat === 'string' ? 'error' : 'text.secondary'}>
        {stat === null
          ? translate('ra.page.loading')
          : typeof stat === 'string'
            ? translate(stat)
            : translate('app.log.stat', { quota: formatQuota(stat.quota, status, QUOTA_DIGITS), tokens: formatCount(stat.token) })}
      </Typography>
    </Box>
  );
}

export function LogList() {
  const admin = isAdmin(readStoredUser()?.role);
  // computed once per visit, so the window holds still while the page is open
  const defaults = useMemo(() => ({ start_timestamp: 0, end_timestamp: Math.floor(Date.now() / 1000) + 3600 }), []);
  const filters = [
    <SelectInput
      key="type"
      source="type"
      label="resources.log.fields.type"
      choices={TYPE_CHOICES}
      emptyText="status.log.all"
      // show "All" rather than a blank box when no type is chosen
      slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
      alwaysOn
    />,
    <TextInput key="token_name" source="token_name" label="resources.log.fields.token_name" alwaysOn />,
    <TextInput key="model_name" source="model_name" label="resources.log.fields.model_name" alwaysOn />,
    <DateTimeFilter key="start" source="start_timestamp" label="app.log.start_time" alwaysOn />,
    <DateTimeFilter key="end" source="end_timestamp" label="app.log.end_time" alwaysOn />,
    ...(admin ? [<TextInput key="username" source="username" label="resources.log.fields.username" alwaysOn />] : []),
  ];
  return (
    <TitledPage title={admin ? 'app.log.title_all' : 'app.log.title_self'}>
      <List {...listDefaults} title="app.log.title_all" actions={false} filters={filters} filterDefaultValues={defaults} storeKey={false}>
        <LogStat admin={admin} />
        <Datagrid bulkActionButtons={false} rowClick={false} sx={{ '& td, & th': { whiteSpace: 'nowrap' }, '& td.column-content': { whiteSpace: 'normal', minWidth: 220 } }}>
          <TimestampField source="created_at" label="resources.log.fields.created_at" />
          {admin && <TextField source="username" />}
          <TextField source="token_name" />
          <StatusChip source="type" label="resources.log.fields.type" labels={LOG_TYPE as never} />
          <TextField source="model_name" />
          <TokensField source="prompt_tokens" label="resources.log.fields.prompt_tokens" sortBy="prompt_tokens" />
          <TokensField source="completion_tokens" label="resources.log.fields.completion_tokens" sortBy="completion_tokens" />
          <QuotaField source="quota" label="resources.log.fields.quota" digits={QUOTA_DIGITS} />
          <LatencyField label="resources.log.fields.elapsed_ms" sortBy="elapsed_ms" />
          <StreamField label="resources.log.fields.is_stream" sortBy="is_stream" />
          {admin && <ChannelIdField label="resources.log.fields.channel_id" sortBy="channel_id" />}
          <LogContentField source="content" label="resources.log.fields.content" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
