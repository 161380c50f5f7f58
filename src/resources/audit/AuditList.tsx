// /audit (admin and root): every audited call, newest first, with the chain's
// status above (ChainIndicator), filters for user, action or route, target,
// outcome and time, a CSV export of what the filters select, and each row's
// change in a drawer (a click on the row, or its button for the keyboard).
// On a phone the filters fold behind a button and rows become cards.
import DownloadIcon from '@mui/icons-material/Download';
import { Button, Chip, Typography } from '@mui/material';
import { useState } from 'react';
import { List, SearchInput, SelectInput, TextField, TextInput, useRecordContext, useTranslate, type RaRecord } from 'react-admin';
import { auditExportUrl } from '../../dataProvider';
import { CardLine } from '../shared/CardList';
import { DateTimeFilter } from '../shared/DateTimeFilter';
import { DetailCards, DetailTable, OpenDetailsButton } from '../shared/DetailList';
import { FilterBar, FiltersToggle, useFoldingFilters } from '../shared/FilterBar';
import { listDefaults, ListBody, tableSx } from '../shared/ListFrame';
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
    <FilterBar
      padding={{ p: 1 }}
      toggle={
        onToggleFilters && (
          <FiltersToggle open={filtersOpen} onToggle={onToggleFilters}>
            {translate('audit.filters')}
          </FiltersToggle>
        )
      }
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
    >
      <ExportButton />
    </FilterBar>
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

function AuditTable({ onOpen }: { onOpen: (record: RaRecord) => void }) {
  return (
    <DetailTable onOpen={onOpen} sx={tableSx}>
      <TextField source="seq" label="audit.fields.seq" sortable={false} />
      <TimestampField source="created_at" label="audit.fields.created_at" />
      <WhoField label="audit.fields.username" sortable={false} />
      <TextField source="action" label="audit.fields.action" sortable={false} />
      <TargetField label="audit.fields.target" sortable={false} />
      <OutcomeField label="audit.fields.success" sortable={false} />
      <TextField source="ip" label="audit.fields.ip" sortable={false} />
      <OpenDetailsButton label="audit.drawer.details" sortable={false} openLabel="audit.drawer.open" onOpen={onOpen} />
    </DetailTable>
  );
}

function AuditCards({ onOpen }: { onOpen: (record: RaRecord) => void }) {
  return (
    <DetailCards
      title={
        <>
          <TextField source="action" /> <TimestampField source="created_at" />
        </>
      }
      onOpen={onOpen}
      openLabel="audit.drawer.open"
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
    </DetailCards>
  );
}

export function AuditList() {
  const translate = useTranslate();
  const [opened, setOpened] = useState<RaRecord>();
  const filters = useFoldingFilters();
  return (
    <TitledPage title="audit.title">
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('audit.intro')}
      </Typography>
      <ChainIndicator />
      <List {...listDefaults} title="audit.title" actions={false} filters={filters.shown(filterInputs)} storeKey={false}>
        <AuditToolbar filtersOpen={filters.open} onToggleFilters={filters.toggle} />
        <ListBody table={<AuditTable onOpen={setOpened} />} cards={<AuditCards onOpen={setOpened} />} />
        <AuditDrawer record={opened} onClose={() => setOpened(undefined)} />
      </List>
    </TitledPage>
  );
}
