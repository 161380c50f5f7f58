// /webhook_delivery: the delivery log (status, attempts, last answer or error,
// next attempt), filtered by webhook, status or event; a delivery can be sent again.
import ReplayIcon from '@mui/icons-material/Replay';
import { Chip } from '@mui/material';
import {
  Button,
  Datagrid,
  FunctionField,
  List,
  NumberField,
  ReferenceField,
  ReferenceInput,
  SelectInput,
  TextField,
  useDataProvider,
  useNotify,
  useRecordContext,
  useRefresh,
  useTranslate,
} from 'react-admin';
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT, type WebhookDeliveryRecord } from '../../../common/webhooks';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { formatTimestamp, TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { ListEmpty } from '../shared/ListFrame';

const STATUS_COLOURS = { pending: 'warning', delivered: 'success', failed: 'error' } as const;

const filters = [
  <ReferenceInput key="webhook_id" source="webhook_id" reference="webhook" alwaysOn>
    <SelectInput
      label="webhooks.deliveries.fields.webhook"
      optionText="name"
      emptyText="app.lists.any"
      helperText={false}
      sx={{ minWidth: 160 }}
    />
  </ReferenceInput>,
  <SelectInput
    key="status"
    source="status"
    label="webhooks.deliveries.fields.status"
    choices={Object.keys(STATUS_COLOURS).map((status) => ({ id: status, name: `webhooks.deliveries.status.${status}` }))}
    emptyText="app.lists.any"
    helperText={false}
    alwaysOn
    sx={{ minWidth: 140 }}
  />,
  <SelectInput
    key="event_type"
    source="event_type"
    label="webhooks.deliveries.fields.event_type"
    choices={[...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT].map((event) => ({ id: event, name: `webhooks.events.${event}` }))}
    emptyText="app.lists.any"
    helperText={false}
    sx={{ minWidth: 180 }}
  />,
];

function DeliveryStatus(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext<WebhookDeliveryRecord>();
  const translate = useTranslate();
  if (!record) return null;
  return (
    <Chip
      size="small"
      color={STATUS_COLOURS[record.status] ?? 'default'}
      label={translate(`webhooks.deliveries.status.${record.status}`)}
    />
  );
}

function RedeliverButton(_: { label?: string }) {
  const record = useRecordContext<WebhookDeliveryRecord>();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notify = useNotify();
  const refresh = useRefresh();
  if (!record) return null;
  const redeliver = async () => {
    try {
      await dataProvider.redeliverWebhook(record.id);
      notify('webhooks.actions.redelivered', { type: 'success' });
      refresh();
    } catch (error) {
      notify((error as Error).message, { type: 'error' });
    }
  };
  return (
    <Button
      label="webhooks.actions.redeliver"
      onClick={(event) => {
        event.stopPropagation();
        void redeliver();
      }}
    >
      <ReplayIcon />
    </Button>
  );
}

export function WebhookDeliveryList() {
  const translate = useTranslate();
  return (
    <TitledPage title="webhooks.deliveries.title">
      <List
        resource="webhook_delivery"
        title="webhooks.deliveries.title"
        filters={filters}
        exporter={false}
        empty={false}
        sort={{ field: 'id', order: 'DESC' }}
        actions={false}
      >
        <Datagrid bulkActionButtons={false} rowClick={false} empty={<ListEmpty />}>
          <NumberField source="id" label="webhooks.deliveries.fields.id" />
          <ReferenceField source="webhook_id" reference="webhook" label="webhooks.deliveries.fields.webhook" link="edit" />
          <FunctionField
            label="webhooks.deliveries.fields.event_type"
            sortBy="event_type"
            render={(record: WebhookDeliveryRecord) => translate(`webhooks.events.${record.event_type}`)}
          />
          <DeliveryStatus label="webhooks.deliveries.fields.status" sortBy="status" />
          <NumberField source="attempts" label="webhooks.deliveries.fields.attempts" />
          <FunctionField
            label="webhooks.deliveries.fields.last_status_code"
            sortable={false}
            render={(record: WebhookDeliveryRecord) =>
              record.attempts === 0 ? '' : record.last_status_code || translate('webhooks.deliveries.no_answer')
            }
          />
          <TextField source="last_error" label="webhooks.deliveries.fields.last_error" sortable={false} />
          <FunctionField
            label="webhooks.deliveries.fields.next_attempt_at"
            sortBy="next_attempt_at"
            render={(record: WebhookDeliveryRecord) =>
              record.status === 'pending' && record.next_attempt_at ? formatTimestamp(Math.floor(record.next_attempt_at / 1000)) : ''
            }
          />
          <TimestampField source="created_time" label="webhooks.deliveries.fields.created_time" />
          <RedeliverButton label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
