import { Datagrid, List, TextField } from 'react-admin';
import { AddActions } from '../shared/AddButton';
import { listDefaults } from '../shared/ListFrame';
import { QuotaField } from '../shared/QuotaField';
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

function RemainingQuota(_: { label?: string }) {
  return <QuotaField source="remain_quota" unlimitedSource="unlimited_quota" balance />;
}

export function TokenList() {
  return (
    <TitledPage title="app.token.title">
      <List {...listDefaults} title="app.token.title" actions={<AddActions to="/token/add" label="app.token.add" />}>
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <TextField source="name" />
          <StatusChip source="status" label="resources.token.fields.status" labels={TOKEN_STATUS as never} />
          <QuotaField source="used_quota" label="resources.token.fields.used_quota" />
          <RemainingQuota label="resources.token.fields.remain_quota" />
          <TimestampField source="created_time" label="resources.token.fields.created_time" />
          <TimestampField source="expired_time" neverLabel="app.common.never" label="resources.token.fields.expired_time" />
          <TokenActions label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
