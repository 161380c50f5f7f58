import { Chip } from '@mui/material';
import { Datagrid, List, NumberField, TextField, useRecordContext } from 'react-admin';
import { findChannelType } from '../../../common/channelTypes';
import { listDefaults } from '../shared/ListFrame';
import { StatusChip } from '../shared/StatusChip';

const CHANNEL_STATUS = { 1: ['status.channel.enabled', 'success'], 2: ['status.channel.disabled', 'error'] } as const;

function TypeField(_: { label?: string }) {
  const record = useRecordContext();
  const type = findChannelType(Number(record?.type));
  return <Chip size="small" variant="outlined" label={type?.label ?? `#${record?.type}`} />;
}

/** Response time badge: grey untested, green <= 1 s, olive <= 3 s, yellow <= 5 s, red above. */
function ResponseTimeField(_: { label?: string }) {
  const record = useRecordContext();
  const ms = Number(record?.response_time ?? 0);
  const color = ms === 0 ? '#9e9e9e' : ms <= 1000 ? '#21ba45' : ms <= 3000 ? '#b5cc18' : ms <= 5000 ? '#fbbd08' : '#db2828';
  return <Chip size="small" label={ms === 0 ? '—' : `${(ms / 1000).toFixed(2)} s`} sx={{ bgcolor: color, color: '#fff' }} />;
}

export function ChannelList() {
  return (
    <List {...listDefaults}>
      <Datagrid bulkActionButtons={false} rowClick={false}>
        <NumberField source="id" />
        <TextField source="name" />
        <TextField source="group" />
        <TypeField label="resources.channel.fields.type" />
        <StatusChip source="status" label="resources.channel.fields.status" labels={CHANNEL_STATUS as never} />
        <ResponseTimeField label="resources.channel.fields.response_time" />
        <NumberField source="balance" />
      </Datagrid>
    </List>
  );
}
