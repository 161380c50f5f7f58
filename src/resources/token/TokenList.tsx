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

/**
 * The state a token is really in: the server marks a key expired or exhausted
 * only when it is next used, so an enabled key past its date or with nothing
 * left is shown as what it is now (a disabled key stays disabled).
 */
export function effectiveTokenStatus(token: { status: number; expired_time: number; remain_quota: number; unlimited_quota: boolean }, nowSeconds: number): number {
  if (token.status !== 1) return token.status;
  if (token.expired_time !== -1 && token.expired_time <= nowSeconds) return 3;
  if (!token.unlimited_quota && token.remain_quota <= 0) return 4;
  return 1;
}

const currentStatus = (record: Record<string, unknown>) => effectiveTokenStatus(record as never, Math.floor(Date.now() / 1000));

function RemainingQuota(_: { label?: string }) {
  return <QuotaField source="remain_quota" unlimitedSource="unlimited_quota" balance />;
}

export function TokenList() {
  return (
    <TitledPage title="app.token.title">
      <List {...listDefaults} title="app.token.title" actions={<AddActions to="/token/add" label="app.token.add" />}>
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <TextField source="name" />
          <StatusChip source="status" label="resources.token.fields.status" labels={TOKEN_STATUS as never} statusOf={currentStatus} />
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
