import { Datagrid, List, SearchInput, SelectInput, TextField, useTranslate } from 'react-admin';
import { ActiveFilters } from '../shared/ActiveFilters';
import { AddActions } from '../shared/AddButton';
import { BulkActions } from '../shared/BulkActions';
import { CardLine, CardList } from '../shared/CardList';
import { listDefaults, ListBody, tableSx, ListEmpty } from '../shared/ListFrame';
import { BudgetField } from '../shared/BudgetField';
import { QuotaField } from '../shared/QuotaField';
import { RateLimitsField } from '../shared/RateLimitsField';
import { StatusChip } from '../shared/StatusChip';
import { TimestampField } from '../shared/TimestampField';
import { TokenActions } from './TokenActions';
import { TitledPage } from '../shared/TitledPage';

const TOKEN_STATUS = {
  1: ['status.token.enabled', 'success'],
  2: ['status.token.disabled', 'error'],
  3: ['status.token.expired', 'warning'],
  4: ['status.token.exhausted', 'secondary'],
} as const;

/**
 * The state a token is really in: the server marks a key expired or exhausted
 * only when it is next used, so an enabled key past its date or with nothing
 * left is shown as what it is now (a disabled key stays disabled).
 */
export function effectiveTokenStatus(
  token: { status: number; expired_time: number; remain_quota: number; unlimited_quota: boolean },
  nowSeconds: number,
): number {
  if (token.status !== 1) return token.status;
  if (token.expired_time !== -1 && token.expired_time <= nowSeconds) return 3;
  if (!token.unlimited_quota && token.remain_quota <= 0) return 4;
  return 1;
}

const currentStatus = (record: Record<string, unknown>) => effectiveTokenStatus(record as never, Math.floor(Date.now() / 1000));

function RemainingQuota(_: { label?: string; sortBy?: string }) {
  return <QuotaField source="remain_quota" unlimitedSource="unlimited_quota" balance />;
}

const STATUS_CHOICES = Object.entries(TOKEN_STATUS).map(([id, [name]]) => ({ id: Number(id), name }));

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <SelectInput
    key="status"
    source="status"
    label="resources.token.fields.status"
    choices={STATUS_CHOICES}
    emptyText="app.lists.any"
    alwaysOn
    sx={{ minWidth: 140 }}
    helperText={false}
  />,
];

function TokenFilters() {
  const translate = useTranslate();
  return (
    <ActiveFilters
      labels={{
        status: {
          label: 'resources.token.fields.status',
          format: (value) => translate(TOKEN_STATUS[Number(value) as 1]?.[0] ?? 'app.common.unknown'),
        },
      }}
    />
  );
}

const TokenStatusField = (_: { label?: string; sortBy?: string }) => (
  <StatusChip source="status" labels={TOKEN_STATUS as never} statusOf={currentStatus} />
);

export function TokenList() {
  return (
    <TitledPage title="app.token.title">
      <List {...listDefaults} title="app.token.title" filters={filters} actions={<AddActions to="/token/add" label="app.token.add" />}>
        <TokenFilters />
        <ListBody
          table={
            <Datagrid
              empty={<ListEmpty />}
              bulkActionButtons={<BulkActions resource="token" />}
              rowClick={(id) => `/token/edit/${id}`}
              sx={tableSx}
            >
              <TextField source="name" />
              <TokenStatusField label="resources.token.fields.status" sortBy="status" />
              <QuotaField source="used_quota" label="resources.token.fields.used_quota" />
              <RemainingQuota label="resources.token.fields.remain_quota" sortBy="remain_quota" />
              <BudgetField label="resources.token.fields.budget" sortable={false} />
              <RateLimitsField label="resources.token.fields.rate_limits" sortable={false} />
              <TimestampField source="created_time" label="resources.token.fields.created_time" />
              <TimestampField source="expired_time" neverLabel="app.common.never" label="resources.token.fields.expired_time" />
              <TokenActions label="app.common.actions" />
            </Datagrid>
          }
          cards={
            <CardList title={<TextField source="name" />} actions={<TokenActions />} linkTo={(record) => `/token/edit/${record.id}`}>
              <div>
                <TokenStatusField />
              </div>
              <CardLine label="resources.token.fields.remain_quota">
                <RemainingQuota />
              </CardLine>
              <CardLine label="resources.token.fields.used_quota">
                <QuotaField source="used_quota" />
              </CardLine>
              <CardLine label="resources.token.fields.budget">
                <BudgetField />
              </CardLine>
              <CardLine label="resources.token.fields.rate_limits">
                <RateLimitsField />
              </CardLine>
              <CardLine label="resources.token.fields.expired_time">
                <TimestampField source="expired_time" neverLabel="app.common.never" />
              </CardLine>
            </CardList>
          }
        />
      </List>
    </TitledPage>
  );
}
