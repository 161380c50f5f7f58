// /audit (admin and root): every audited call, newest first, with the chain's
// status above (ChainIndicator), filters for user, action or route, target,
// outcome and time, a CSV export of what the filters select, and each row's
// change in a drawer (a click on the row, or its button for the keyboard).
// On a phone the filters fold behind a button and rows become cards.
import DownloadIcon from '@mui/icons-material/Download';
import FilterListIcon from '@mui/icons-material/FilterList';
import OpenInFullIcon from '@mui/icons-material/OpenInFull';
import { Box, Button, Chip, IconButton, Typography } from '@mui/material';
import { useState, type MouseEvent } from 'react';
import { Datagrid, List, SearchInput, SelectInput, TextField, TextInput, useRecordContext, useTranslate, type RaRecord } from 'react-admin';
import { auditExportUrl } from '../../dataProvider';
import { ActiveFilters } from '../shared/ActiveFilters';
import { CardLine, CardList } from '../shared/CardList';
import { listDefaults, ListBody, ListEmpty, tableSx, useSmallScreen } from '../shared/ListFrame';
import { formatTimestamp, TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { textOf } from '../shared/textOf';
import { useListFilters } from '../shared/useListFilters';
import { AuditDrawer } from './AuditDrawer';
import { ChainIndicator } from './ChainIndicator';

const TARGET_TYPES = ['user', 'token', 'channel', 'redemption', 'option', 'import', 'webhook', 'audit'];
const TARGET_CHOICES = TARGET_TYPES.map((type) => ({ id: type, name: type }));
const OUTCOME_CHOICES = [
  { id: 'true', name: 'audit.outcome.success' },
  { id: 'false', name: 'audit.outcome.failure' },
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

const filterInputs = [
  <SearchInput key="q" source="q" alwaysOn />,
  <TextInput key="username" source="username" label="audit.fields.username" helperText={false} resettable alwaysOn />,
  <TextInput key="action" source="action" label="audit.fields.action" helperText={false} resettable alwaysOn />,
  <SelectInput
    key="target_type"
    source="target_type"
    label="audit.fields.target_type"
    choices={TARGET_CHOICES}
    translateChoice={false}
    emptyText="audit.outcome.all"
    slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
    alwaysOn
  />,
  <SelectInput
    key="success"
    source="success"
    label="audit.fields.success"
    choices={OUTCOME_CHOICES}
    emptyText="audit.outcome.all"
    slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
    alwaysOn
  />,
  <DateTimeFilter key="start" source="start_timestamp" label="audit.start_time" alwaysOn />,
  <DateTimeFilter key="end" source="end_timestamp" label="audit.end_time" alwaysOn />,
];

/** The CSV of every row the filters select, downloaded with the session's cookie. */
function ExportButton() {
  const translate = useTranslate();
  const { filterValues } = useListFilters();
  return (
    <Button size="small" variant="outlined" component="a" href={auditExportUrl(filterValues)} download startIcon={<DownloadIcon />}>
      {translate('audit.export')}
    </Button>
  );
}

function AuditToolbar({ onToggleFilters, filtersOpen }: { onToggleFilters?: () => void; filtersOpen: boolean }) {
  const translate = useTranslate();
  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1, p: 1 }}>
      {onToggleFilters && (
        <Button
          size="small"
          variant={filtersOpen ? 'contained' : 'outlined'}
          disableElevation
          aria-expanded={filtersOpen}
          onClick={onToggleFilters}
          startIcon={<FilterListIcon />}
        >
          {translate('audit.filters')}
        </Button>
      )}
      <Box sx={{ flexGrow: 1, minWidth: 0 }}>
        <ActiveFilters
          labels={{
            username: { label: 'audit.fields.username' },
            action: { label: 'audit.fields.action' },
            target_type: { label: 'audit.fields.target_type' },
            success: {
              label: 'audit.fields.success',
              format: (value) => translate(value === 'true' ? 'audit.outcome.success' : 'audit.outcome.failure'),
            },
            start_timestamp: { label: 'audit.start_time', format: (value) => formatTimestamp(Number(value)) },
            end_timestamp: { label: 'audit.end_time', format: (value) => formatTimestamp(Number(value)) },
          }}
        />
      </Box>
      <ExportButton />
    </Box>
  );
}

function OutcomeField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  const success = Boolean(record.success);
  return (
    <Chip
      size="small"
      color={success ? 'success' : 'error'}
      label={`${textOf(record.status)} ${translate(success ? 'audit.outcome.success' : 'audit.outcome.failure')}`}
    />
  );
}

function TargetField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  if (!record) return null;
  const target = [textOf(record.target_type), textOf(record.target_id)].filter(Boolean).join(' #');
  return <span>{target || '—'}</span>;
}

function WhoField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  const name = textOf(record.username);
  return <span>{name || translate('audit.drawer.nobody')}</span>;
}

function OpenButton({ onOpen }: { label?: string; sortable?: boolean; onOpen: (record: RaRecord) => void }) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  const label = translate('audit.drawer.open');
  return (
    <IconButton
      size="small"
      aria-label={label}
      title={label}
      onClick={(event: MouseEvent) => {
        event.stopPropagation();
        onOpen(record);
      }}
    >
      <OpenInFullIcon fontSize="inherit" />
    </IconButton>
  );
}

function AuditTable({ onOpen }: { onOpen: (record: RaRecord) => void }) {
  return (
    <Datagrid
      empty={<ListEmpty />}
      bulkActionButtons={false}
      rowClick={(_id, _resource, record) => {
        onOpen(record);
        return false;
      }}
      sx={tableSx}
    >
      <TextField source="seq" label="audit.fields.seq" sortable={false} />
      <TimestampField source="created_at" label="audit.fields.created_at" />
      <WhoField label="audit.fields.username" sortable={false} />
      <TextField source="action" label="audit.fields.action" sortable={false} />
      <TargetField label="audit.fields.target" sortable={false} />
      <OutcomeField label="audit.fields.success" sortable={false} />
      <TextField source="ip" label="audit.fields.ip" sortable={false} />
      <OpenButton label="audit.drawer.details" sortable={false} onOpen={onOpen} />
    </Datagrid>
  );
}

function AuditCards({ onOpen }: { onOpen: (record: RaRecord) => void }) {
  return (
    <CardList
      title={
        <>
          <TextField source="action" /> <TimestampField source="created_at" />
        </>
      }
      onOpen={onOpen}
      actions={<OpenButton onOpen={onOpen} />}
    >
      <div>
        <OutcomeField />
      </div>
      <CardLine label="audit.fields.username">
        <WhoField />
      </CardLine>
      <CardLine label="audit.fields.target">
        <TargetField />
      </CardLine>
      <CardLine label="audit.fields.ip">
        <TextField source="ip" />
      </CardLine>
    </CardList>
  );
}

export function AuditList() {
  const translate = useTranslate();
  const [opened, setOpened] = useState<RaRecord>();
  const phone = useSmallScreen();
  const [filtersOpen, setFiltersOpen] = useState(false);
  return (
    <TitledPage title="audit.title">
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('audit.intro')}
      </Typography>
      <ChainIndicator />
      <List
        {...listDefaults}
        title="audit.title"
        actions={false}
        filters={phone && !filtersOpen ? undefined : filterInputs}
        storeKey={false}
      >
        <AuditToolbar filtersOpen={filtersOpen} onToggleFilters={phone ? () => setFiltersOpen((open) => !open) : undefined} />
        <ListBody table={<AuditTable onOpen={setOpened} />} cards={<AuditCards onOpen={setOpened} />} />
        <AuditDrawer record={opened} onClose={() => setOpened(undefined)} />
      </List>
    </TitledPage>
  );
}
