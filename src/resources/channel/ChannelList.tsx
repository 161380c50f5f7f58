// /channel: every channel with its type, state, last test and balance; sorting
// is over the loaded page, in the browser (the API orders by id only).
import { Datagrid, List, NumberField, TextField } from 'react-admin';
import { GroupChips } from '../shared/GroupChips';
import { listDefaults } from '../shared/ListFrame';
import { TitledPage } from '../shared/TitledPage';
import { ChannelActions, ChannelFooter } from './ChannelActions';
import { BalanceField, ChannelStatusField, ChannelTypeField, ResponseTimeField } from './ChannelFields';

export function ChannelList() {
  return (
    <TitledPage title="app.channel.title">
      <List {...listDefaults} title="app.channel.title" actions={false} pagination={<ChannelFooter />}>
        {/* one line per row: on narrow screens the table scrolls sideways instead of growing tall */}
        <Datagrid bulkActionButtons={false} rowClick={false} sx={{ '& td, & th': { whiteSpace: 'nowrap' } }}>
          <NumberField source="id" />
          <TextField source="name" />
          <GroupChips label="resources.channel.fields.group" sortBy="group" />
          <ChannelTypeField label="resources.channel.fields.type" sortBy="type" />
          <ChannelStatusField label="resources.channel.fields.status" sortBy="status" />
          <ResponseTimeField label="resources.channel.fields.response_time" sortBy="response_time" />
          <BalanceField label="resources.channel.fields.balance" sortBy="balance" />
          <ChannelActions label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
