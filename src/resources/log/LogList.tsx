// /log: admins read everyone's logs (with user and channel pickers and
// columns), others their own. The window defaults to epoch 0 .. an hour from
// now, fixed when the page opens, with presets for today, 7 and 30 days; the
// line above the table sums the quota spent within the filters. A row's
// channel and user open their records; its token keeps only that token's logs.
// A click on a row (or its details button) opens the row in full in a drawer.
// Newest first by time: rows are written when a request ends, so ids are not in time order.
// On a phone the filter fields fold behind a "Filters" button (the active ones
// stay listed as chips), so the first screen shows log rows.
import { Badge, Box, Button, ButtonGroup, Link, Typography } from '@mui/material';
import { useEffect, useMemo, useState, type MouseEvent, type ReactNode } from 'react';
import {
  AutocompleteInput,
  List,
  SelectInput,
  TextField,
  TextInput,
  useDataProvider,
  useGetList,
  useRecordContext,
  useTranslate,
  type RaRecord,
} from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import type { ChannelRecord, TokenRecord, UserRecord } from '../../../common/records';
import { isAdmin } from '../../../common/roles';
import { readStoredUser } from '../../dataProvider/storage';
import type { LogFilter, SwitchboardDataProvider } from '../../dataProvider';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../dataProvider/errorMessage';
import { formatCount, formatQuota } from '../../quota';
import { textOf } from '../shared/textOf';
import { useListFilters } from '../shared/useListFilters';
import { CardLine } from '../shared/CardList';
import { DateTimeFilter } from '../shared/DateTimeFilter';
import { DetailCards, DetailTable, OpenDetailsButton } from '../shared/DetailList';
import { FilterBar, FiltersToggle, useFoldingFilters } from '../shared/FilterBar';
import { listDefaults, ListBody, tableSx } from '../shared/ListFrame';
import { QuotaField } from '../shared/QuotaField';
import { StatusChip } from '../shared/StatusChip';
import { formatTimestamp, TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { LogDrawer } from './LogDrawer';
import { ChannelIdField, LatencyField, LogContentField, StreamField, TokensField } from './LogFields';

const LOG_TYPE = {
  1: ['status.log.topup', 'success'],
  2: ['status.log.consume', 'info'],
  3: ['status.log.manage', 'warning'],
  4: ['status.log.system', 'secondary'],
  5: ['status.log.error', 'error'],
} as const;

// one request costs fractions of a cent: rows and their sum show six decimals
const QUOTA_DIGITS = 6;

// "all" (0) is the empty choice: no type filter
const TYPE_CHOICES = [
  { id: 1, name: 'status.log.topup' },
  { id: 2, name: 'status.log.consume' },
  { id: 3, name: 'status.log.manage' },
  { id: 4, name: 'status.log.system' },
  { id: 5, name: 'status.log.error' },
];

function LogStat({ admin }: { admin: boolean }) {
  const { filterValues } = useListFilters();
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
  let line: string;
  if (stat === null) line = translate('ra.page.loading');
  else if (typeof stat === 'string') line = translate(stat);
  else line = translate('app.log.stat', { quota: formatQuota(stat.quota, status, QUOTA_DIGITS), tokens: formatCount(stat.token) });
  return (
    <Box sx={{ px: 2, py: 1.5, borderBottom: 1, borderColor: 'divider' }} data-testid="log-stat">
      <Typography variant="body2" color={typeof stat === 'string' ? 'error' : 'text.secondary'}>
        {line}
      </Typography>
    </Box>
  );
}

/** A name picker (model, token, user): suggestions, and any other name typed in. */
function NamePicker({ source, label, names }: { source: string; label: string; names: string[]; alwaysOn?: boolean }) {
  const choices = [...new Set(names.filter(Boolean))].sort().map((name) => ({ id: name, name }));
  return (
    <AutocompleteInput
      source={source}
      label={label}
      choices={choices}
      translateChoice={false}
      onCreate={(text) => (text ? { id: text, name: text } : undefined)}
      createItemLabel="%{item}"
      sx={{ minWidth: 180 }}
      helperText={false}
    />
  );
}

const BIG_PAGE = { pagination: { page: 1, perPage: 100 }, sort: { field: 'id', order: 'DESC' as const } };

function TokenPicker(props: { source: string; alwaysOn?: boolean }) {
  const { data } = useGetList<TokenRecord & RaRecord>('token', BIG_PAGE);
  return <NamePicker {...props} label="resources.log.fields.token_name" names={(data ?? []).map((token) => String(token.name))} />;
}

function UserPicker(props: { source: string; alwaysOn?: boolean }) {
  const { data } = useGetList<UserRecord & RaRecord>('user', BIG_PAGE);
  return <NamePicker {...props} label="resources.log.fields.username" names={(data ?? []).map((user) => String(user.username))} />;
}

function ModelPicker(props: { source: string; alwaysOn?: boolean; admin: boolean }) {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    if (!props.admin) return;
    let live = true;
    dataProvider.channelModels().then(
      (names) => live && setModels(names),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [dataProvider, props.admin]);
  return <NamePicker source={props.source} label="resources.log.fields.model_name" names={models} />;
}

function ChannelPicker(_: { source: string; alwaysOn?: boolean }) {
  const { data } = useGetList<ChannelRecord & RaRecord>('channel', BIG_PAGE);
  const choices = (data ?? []).map((channel) => ({ id: Number(channel.id), name: `#${channel.id} ${channel.name}` }));
  return (
    <AutocompleteInput
      source="channel"
      label="resources.log.fields.channel_id"
      choices={choices}
      translateChoice={false}
      sx={{ minWidth: 180 }}
      helperText={false}
    />
  );
}

const DAY = 86_400;

/** Today, 7 days, 30 days: the window's start; its end stays where the page opened it. */
function TimePresets({ end }: { end: number }) {
  const { filterValues, displayedFilters, setFilters } = useListFilters();
  const translate = useTranslate();
  const now = Math.floor(Date.now() / 1000);
  const midnight = Math.floor(new Date(new Date().setHours(0, 0, 0, 0)).getTime() / 1000);
  const presets = [
    { key: 'today', start: midnight },
    { key: 'last_7_days', start: now - 7 * DAY },
    { key: 'last_30_days', start: now - 30 * DAY },
  ];
  return (
    <ButtonGroup size="small" variant="outlined" aria-label={translate('app.lists.time_range')} sx={{ alignSelf: 'center', flexShrink: 0 }}>
      {presets.map((preset) => (
        <Button
          key={preset.key}
          onClick={() => setFilters({ ...filterValues, start_timestamp: preset.start, end_timestamp: end }, displayedFilters)}
        >
          {translate(`app.lists.${preset.key}`)}
        </Button>
      ))}
    </ButtonGroup>
  );
}

/** The phone's button that shows or hides the filter fields, with how many filters are set beyond the defaults. */
function LogFiltersToggle({ open, onToggle, defaults }: { open: boolean; onToggle: () => void; defaults: Record<string, unknown> }) {
  const translate = useTranslate();
  const { filterValues } = useListFilters();
  const set = Object.entries(filterValues).filter(([key, value]) => value !== undefined && value !== '' && value !== defaults[key]).length;
  return (
    <FiltersToggle open={open} onToggle={onToggle}>
      <Badge badgeContent={set} color="primary" sx={{ '& .MuiBadge-badge': { right: -12 } }}>
        {translate('app.log.filters')}
      </Badge>
    </FiltersToggle>
  );
}

function LogFilters({ defaults, toggle }: { defaults: Record<string, unknown>; toggle?: ReactNode }) {
  const translate = useTranslate();
  return (
    <FilterBar
      padding={{ pr: 1, pl: toggle ? 1 : 0, pt: toggle ? 1 : 0 }}
      toggle={toggle}
      defaults={defaults}
      labels={{
        type: {
          label: 'resources.log.fields.type',
          format: (value) => translate(LOG_TYPE[Number(value) as 1]?.[0] ?? 'status.log.unknown'),
        },
        token_name: { label: 'resources.log.fields.token_name' },
        model_name: { label: 'resources.log.fields.model_name' },
        username: { label: 'resources.log.fields.username' },
        channel: { label: 'resources.log.fields.channel_id', format: (value) => `#${textOf(value)}` },
        request_id: { label: 'resources.log.fields.request_id' },
        start_timestamp: { label: 'app.log.start_time', format: (value) => formatTimestamp(Number(value)) },
        end_timestamp: { label: 'app.log.end_time', format: (value) => formatTimestamp(Number(value)) },
      }}
    >
      <TimePresets end={Number(defaults.end_timestamp)} />
    </FilterBar>
  );
}

/** The token's name; a click keeps only that token's logs. */
function TokenNameField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext();
  const { filterValues, displayedFilters, setFilters } = useListFilters();
  const translate = useTranslate();
  const name = String(record?.token_name ?? '');
  if (!name) return null;
  return (
    <Link
      component="button"
      type="button"
      variant="body2"
      title={translate('app.lists.filter_token', { name })}
      onClick={(event: MouseEvent) => {
        event.stopPropagation();
        setFilters({ ...filterValues, token_name: name }, displayedFilters);
      }}
    >
      {name}
    </Link>
  );
}

/** The user's name, opening their account (admins). */
function UsernameLinkField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const name = String(record?.username ?? '');
  if (!record?.user_id) return <span>{name}</span>;
  return (
    <Link
      component={RouterLink}
      to={`/user/edit/${record.user_id}`}
      variant="body2"
      title={translate('app.lists.open_user', { name })}
      onClick={(event: MouseEvent) => event.stopPropagation()}
    >
      {name}
    </Link>
  );
}

/** The filters above the log: type, token, model, request id and the time window; user and channel for admins. */
function logFilterInputs(admin: boolean) {
  return [
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
    <TokenPicker key="token_name" source="token_name" alwaysOn />,
    <ModelPicker key="model_name" source="model_name" admin={admin} alwaysOn />,
    <TextInput key="request_id" source="request_id" label="resources.log.fields.request_id" helperText={false} resettable alwaysOn />,
    <DateTimeFilter key="start" source="start_timestamp" label="app.log.start_time" alwaysOn />,
    <DateTimeFilter key="end" source="end_timestamp" label="app.log.end_time" alwaysOn />,
    ...(admin ? [<UserPicker key="username" source="username" alwaysOn />, <ChannelPicker key="channel" source="channel" alwaysOn />] : []),
  ];
}

interface LogViewProps {
  admin: boolean;
  defaults: Record<string, unknown>;
  onOpen: (record: RaRecord) => void;
}

/** The log as a table (wider screens): a row click opens its details. */
function LogTable({ admin, defaults, onOpen }: LogViewProps) {
  return (
    <DetailTable
      onOpen={onOpen}
      emptyDefaults={defaults}
      sx={{ ...tableSx, '& td.column-content': { whiteSpace: 'normal', minWidth: 220, maxWidth: 480, overflowWrap: 'anywhere' } }}
    >
      <TimestampField source="created_at" label="resources.log.fields.created_at" />
      {admin && <UsernameLinkField label="resources.log.fields.username" sortBy="username" />}
      <TokenNameField label="resources.log.fields.token_name" sortBy="token_name" />
      <StatusChip source="type" label="resources.log.fields.type" labels={LOG_TYPE as never} />
      <TextField source="model_name" />
      <TokensField source="prompt_tokens" label="resources.log.fields.prompt_tokens" sortBy="prompt_tokens" />
      <TokensField source="completion_tokens" label="resources.log.fields.completion_tokens" sortBy="completion_tokens" />
      <QuotaField source="quota" label="resources.log.fields.quota" digits={QUOTA_DIGITS} />
      <LatencyField label="resources.log.fields.elapsed_ms" sortBy="elapsed_ms" />
      <StreamField label="resources.log.fields.is_stream" sortable={false} />
      {admin && <ChannelIdField label="resources.log.fields.channel_id" sortBy="channel_id" />}
      <LogContentField source="content" label="resources.log.fields.content" sortable={false} />
      <OpenDetailsButton label="app.log.drawer.details" sortable={false} openLabel="app.log.drawer.open" onOpen={onOpen} />
    </DetailTable>
  );
}

/** The log as cards (phones): a card opens its details. */
function LogCards({ admin, defaults, onOpen }: LogViewProps) {
  return (
    <DetailCards
      title={
        <>
          <TimestampField source="created_at" /> <TextField source="model_name" />
        </>
      }
      onOpen={onOpen}
      openLabel="app.log.drawer.open"
      emptyDefaults={defaults}
    >
      <div>
        <StatusChip source="type" labels={LOG_TYPE as never} />
        <StreamField />
        {admin && <ChannelIdField />}
      </div>
      {admin && (
        <CardLine label="resources.log.fields.username">
          <UsernameLinkField />
        </CardLine>
      )}
      <CardLine label="resources.log.fields.token_name">
        <TokenNameField />
      </CardLine>
      <CardLine label="resources.log.fields.quota">
        <QuotaField source="quota" digits={QUOTA_DIGITS} />
      </CardLine>
      <CardLine label="resources.log.fields.prompt_tokens">
        <TokensField source="prompt_tokens" /> / <TokensField source="completion_tokens" />
      </CardLine>
      <Typography variant="body2" sx={{ overflowWrap: 'anywhere' }}>
        <LogContentField />
      </Typography>
    </DetailCards>
  );
}

export function LogList() {
  const admin = isAdmin(readStoredUser()?.role);
  // computed once per visit, so the window holds still while the page is open
  const defaults = useMemo(() => ({ start_timestamp: 0, end_timestamp: Math.floor(Date.now() / 1000) + 3600 }), []);
  const [opened, setOpened] = useState<RaRecord>();
  const filters = useFoldingFilters();
  return (
    <TitledPage title={admin ? 'app.log.title_all' : 'app.log.title_self'}>
      <List
        {...listDefaults}
        title="app.log.title_all"
        actions={false}
        filters={filters.shown(logFilterInputs(admin))}
        filterDefaultValues={defaults}
        storeKey={false}
        sort={{ field: 'created_at', order: 'DESC' }}
      >
        <LogFilters
          defaults={defaults}
          toggle={filters.toggle ? <LogFiltersToggle open={filters.open} onToggle={filters.toggle} defaults={defaults} /> : undefined}
        />
        <LogStat admin={admin} />
        <ListBody
          table={<LogTable admin={admin} defaults={defaults} onOpen={setOpened} />}
          cards={<LogCards admin={admin} defaults={defaults} onOpen={setOpened} />}
        />
        <LogDrawer record={opened} admin={admin} typeLabels={LOG_TYPE} quotaDigits={QUOTA_DIGITS} onClose={() => setOpened(undefined)} />
      </List>
    </TitledPage>
  );
}
