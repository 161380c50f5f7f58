import { Datagrid, List, NumberField, Pagination, SelectInput, TextField, TextInput } from 'react-admin';
import { isAdmin } from '../../../common/roles';
import { readStoredUser } from '../../authProvider/storage';
import { PAGE_SIZE } from '../../dataProvider';
import { QuotaField } from '../shared/QuotaField';
import { StatusChip } from '../shared/StatusChip';
import { TimestampField } from '../shared/TimestampField';

const LOG_TYPE = {
  1: ['status.log.topup', 'success'],
  2: ['status.log.consume', 'info'],
  3: ['status.log.manage', 'warning'],
  4: ['status.log.system', 'secondary'],
} as const;

const TYPE_CHOICES = [
  { id: 0, name: 'status.log.all' },
  { id: 1, name: 'status.log.topup' },
  { id: 2, name: 'status.log.consume' },
  { id: 3, name: 'status.log.manage' },
  { id: 4, name: 'status.log.system' },
];

export function LogList() {
  const admin = isAdmin(readStoredUser()?.role);
  const filters = [
    <SelectInput key="type" source="type" choices={TYPE_CHOICES} alwaysOn emptyValue={0} />,
    <TextInput key="token_name" source="token_name" alwaysOn />,
    <TextInput key="model_name" source="model_name" alwaysOn />,
    ...(admin ? [<TextInput key="username" source="username" alwaysOn />] : []),
  ];
  return (
    <List perPage={PAGE_SIZE} pagination={<Pagination rowsPerPageOptions={[PAGE_SIZE]} />} filters={filters} exporter={false} sort={{ field: 'id', order: 'DESC' }}>
      <Datagrid bulkActionButtons={false} rowClick={false}>
        <TimestampField source="created_at" label="resources.log.fields.created_at" />
        {admin && <TextField source="username" />}
        <TextField source="token_name" />
        <StatusChip source="type" label="resources.log.fields.type" labels={LOG_TYPE as never} />
        <TextField source="model_name" />
        <NumberField source="prompt_tokens" />
        <NumberField source="completion_tokens" />
        <QuotaField source="quota" label="resources.log.fields.quota" />
        <TextField source="content" />
      </Datagrid>
    </List>
  );
}
