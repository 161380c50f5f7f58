import { Datagrid, List, NumberField, TextField } from 'react-admin';
import { AddActions } from '../shared/AddButton';
import { listDefaults } from '../shared/ListFrame';
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

export function RedemptionList() {
  return (
    <TitledPage title="app.redemption.title">
      <List {...listDefaults} title="app.redemption.title" actions={<AddActions to="/redemption/add" label="app.redemption.add" />}>
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <NumberField source="id" />
          <TextField source="name" />
          <StatusChip source="status" label="resources.redemption.fields.status" labels={REDEMPTION_STATUS as never} />
          <QuotaField source="quota" label="resources.redemption.fields.quota" />
          <TimestampField source="created_time" label="resources.redemption.fields.created_time" />
          <TimestampField source="redeemed_time" label="resources.redemption.fields.redeemed_time" />
          <RedemptionActions label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
