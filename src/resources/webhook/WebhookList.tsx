// /webhook: the registered webhooks, with a test event and their deliveries a click away.
import SendIcon from '@mui/icons-material/Send';
import ListAltIcon from '@mui/icons-material/ListAlt';
import { Chip, Stack } from '@mui/material';
import {
  BooleanField,
  Button,
  CreateButton,
  Datagrid,
  DeleteButton,
  EditButton,
  List,
  NumberField,
  TextField,
  TopToolbar,
  useDataProvider,
  useNotify,
  useRecordContext,
  useTranslate,
} from 'react-admin';
import { Link } from 'react-router-dom';
import { stringify } from 'query-string';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { ListEmpty } from '../shared/ListFrame';

function EventChips(_: { label?: string }) {
  const record = useRecordContext<{ events: string[] }>();
  const translate = useTranslate();
  return (
    <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 0.5 }}>
      {(record?.events ?? []).map((event) => (
        <Chip key={event} size="small" label={translate(`webhooks.events.${event}`)} />
      ))}
    </Stack>
  );
}

function TestButton() {
  const record = useRecordContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notify = useNotify();
  if (!record) return null;
  const send = async () => {
    try {
      await dataProvider.sendTestWebhook(record.id);
      notify('webhooks.actions.test_sent', { type: 'success' });
    } catch (error) {
      notify((error as Error).message, { type: 'error' });
    }
  };
  return (
    <Button
      label="webhooks.actions.test"
      onClick={(event) => {
        event.stopPropagation();
        void send();
      }}
    >
      <SendIcon />
    </Button>
  );
}

/** The delivery log filtered to this webhook. */
function DeliveriesLink() {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <Button
      component={Link}
      to={{ pathname: '/webhook_delivery', search: stringify({ filter: JSON.stringify({ webhook_id: record.id }) }) }}
      label="webhooks.actions.deliveries"
      onClick={(event) => event.stopPropagation()}
    >
      <ListAltIcon />
    </Button>
  );
}

function RowActions(_: { label?: string }) {
  return (
    <Stack direction="row" sx={{ gap: 0.5, flexWrap: 'wrap' }}>
      <EditButton />
      <TestButton />
      <DeliveriesLink />
      <DeleteButton mutationMode="pessimistic" />
    </Stack>
  );
}

export function WebhookList() {
  const translate = useTranslate();
  return (
    <TitledPage title="webhooks.title">
      <p>{translate('webhooks.intro')}</p>
      <List
        resource="webhook"
        title="webhooks.title"
        exporter={false}
        empty={false}
        sort={{ field: 'id', order: 'DESC' }}
        actions={
          <TopToolbar>
            <Button component={Link} to="/webhook_delivery" label="webhooks.deliveries.menu">
              <ListAltIcon />
            </Button>
            <CreateButton label="webhooks.add" />
          </TopToolbar>
        }
      >
        <Datagrid rowClick="edit" bulkActionButtons={false} empty={<ListEmpty />}>
          <NumberField source="id" label="webhooks.fields.id" />
          <TextField source="name" label="webhooks.fields.name" />
          <TextField source="url" label="webhooks.fields.url" />
          <EventChips label="webhooks.fields.events" />
          <BooleanField source="enabled" label="webhooks.fields.enabled" />
          <TimestampField source="created_time" label="webhooks.fields.created_time" />
          <RowActions label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
