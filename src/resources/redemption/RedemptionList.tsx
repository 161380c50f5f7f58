// /redemption: the codes, sorted, filtered and paged by the server; a row
// opens the code; selected codes can be enabled, disabled or deleted together.
import { Datagrid, List, NumberField, SearchInput, SelectInput, TextField, useTranslate } from 'react-admin';
import { ActiveFilters } from '../shared/ActiveFilters';
import { AddActions } from '../shared/AddButton';
import { BulkActions } from '../shared/BulkActions';
import { CardLine, CardList } from '../shared/CardList';
import { listDefaults, ListBody, tableSx, ListEmpty } from '../shared/ListFrame';
import { QuotaField } from '../shared/QuotaField';
import { StatusChip } from '../shared/StatusChip';
import { TimestampField } from '../shared/TimestampField';
import { RedemptionActions } from './RedemptionActions';
import { TitledPage } from '../shared/TitledPage';

const REDEMPTION_STATUS = {
  1: ['status.redemption.unused', 'success'],
  2: ['status.redemption.disabled', 'error'],
  3: ['status.redemption.used', 'default'],
} as const;

const STATUS_CHOICES = Object.entries(REDEMPTION_STATUS).map(([id, [name]]) => ({ id: Number(id), name }));

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <SelectInput
    key="status"
    source="status"
    label="resources.redemption.fields.status"
    choices={STATUS_CHOICES}
    emptyText="app.lists.any"
    alwaysOn
    sx={{ minWidth: 140 }}
    helperText={false}
  />,
];

function RedemptionFilters() {
  const translate = useTranslate();
  return (
    <ActiveFilters
      labels={{
        status: {
          label: 'resources.redemption.fields.status',
          format: (value) => translate(REDEMPTION_STATUS[Number(value) as 1]?.[0] ?? 'app.common.unknown'),
        },
      }}
    />
  );
}

const RedemptionStatusField = (_: { label?: string; sortBy?: string }) => (
  <StatusChip source="status" labels={REDEMPTION_STATUS as never} />
);

export function RedemptionList() {
  return (
    <TitledPage title="app.redemption.title">
      <List
        {...listDefaults}
        title="app.redemption.title"
        filters={filters}
        actions={<AddActions to="/redemption/add" label="app.redemption.add" />}
      >
        <RedemptionFilters />
        <ListBody
          table={
            <Datagrid
              empty={<ListEmpty />}
              bulkActionButtons={<BulkActions resource="redemption" />}
              rowClick={(id) => `/redemption/edit/${id}`}
              sx={tableSx}
            >
              <NumberField source="id" />
              <TextField source="name" />
              <RedemptionStatusField label="resources.redemption.fields.status" sortBy="status" />
              <QuotaField source="quota" label="resources.redemption.fields.quota" />
              <TimestampField source="created_time" label="resources.redemption.fields.created_time" />
              <TimestampField source="redeemed_time" label="resources.redemption.fields.redeemed_time" />
              <RedemptionActions label="app.common.actions" />
            </Datagrid>
          }
          cards={
            <CardList
              title={
                <>
                  <NumberField source="id" sx={{ mr: 1, color: 'text.secondary' }} />
                  <TextField source="name" />
                </>
              }
              actions={<RedemptionActions />}
              linkTo={(record) => `/redemption/edit/${record.id}`}
            >
              <div>
                <RedemptionStatusField />
              </div>
              <CardLine label="resources.redemption.fields.quota">
                <QuotaField source="quota" />
              </CardLine>
              <CardLine label="resources.redemption.fields.created_time">
                <TimestampField source="created_time" />
              </CardLine>
            </CardList>
          }
        />
      </List>
    </TitledPage>
  );
}
