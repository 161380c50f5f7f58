// /channel: every channel with its type, state, last test and balance. Sorted,
// filtered and paged by the server; a row opens the channel; selected rows can
// be enabled, disabled or deleted together; on a phone, cards.
import { useEffect, useState } from 'react';
import {
  Datagrid,
  List,
  NumberField,
  SearchInput,
  SelectInput,
  TextField,
  useDataProvider,
  useTranslate,
  type Identifier,
} from 'react-admin';
import { CHANNEL_TYPES, findChannelType } from '../../../common/channelTypes';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { ActiveFilters } from '../shared/ActiveFilters';
import { BulkActions } from '../shared/BulkActions';
import { CardLine, CardList } from '../shared/CardList';
import { GroupChips } from '../shared/GroupChips';
import { listDefaults, ListBody, tableSx, ListEmpty } from '../shared/ListFrame';
import { TitledPage } from '../shared/TitledPage';
import { ChannelActions, ChannelFooter } from './ChannelActions';
import { BalanceField, ChannelStatusField, ChannelTypeField, ResponseTimeField } from './ChannelFields';

const STATUS_CHOICES = [
  { id: 1, name: 'status.channel.enabled' },
  { id: 2, name: 'status.channel.disabled' },
];
const TYPE_CHOICES = CHANNEL_TYPES.map((type) => ({ id: type.value, name: `${type.label} (${type.value})` }));
const facetSx = { minWidth: 140 };

/** The group facet: the groups the ratio settings define. */
function GroupFilter(_: { alwaysOn?: boolean; source: string }) {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const [groups, setGroups] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    dataProvider.groups().then(
      (names) => live && setGroups(names),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [dataProvider]);
  return (
    <SelectInput
      source="group"
      label="resources.channel.fields.group"
      choices={groups.map((name) => ({ id: name, name }))}
      translateChoice={false}
      emptyText="app.lists.any"
      sx={facetSx}
      helperText={false}
    />
  );
}

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <SelectInput
    key="status"
    source="status"
    label="resources.channel.fields.status"
    choices={STATUS_CHOICES}
    emptyText="app.lists.any"
    alwaysOn
    sx={facetSx}
    helperText={false}
  />,
  <SelectInput
    key="type"
    source="type"
    label="resources.channel.fields.type"
    choices={TYPE_CHOICES}
    translateChoice={false}
    emptyText="app.lists.any"
    alwaysOn
    sx={facetSx}
    helperText={false}
  />,
  <GroupFilter key="group" source="group" alwaysOn />,
];

function ChannelFilters() {
  const translate = useTranslate();
  return (
    <ActiveFilters
      labels={{
        status: {
          label: 'resources.channel.fields.status',
          format: (value) => translate(Number(value) === 1 ? 'status.channel.enabled' : 'status.channel.disabled'),
        },
        type: { label: 'resources.channel.fields.type', format: (value) => findChannelType(Number(value))?.label ?? String(value) },
        group: { label: 'resources.channel.fields.group' },
      }}
    />
  );
}

const editPath = (record: { id: Identifier }) => `/channel/edit/${record.id}`;

export function ChannelList() {
  return (
    <TitledPage title="app.channel.title">
      <List {...listDefaults} title="app.channel.title" actions={false} filters={filters} pagination={<ChannelFooter />}>
        <ChannelFilters />
        <ListBody
          table={
            <Datagrid
              empty={<ListEmpty />}
              bulkActionButtons={<BulkActions resource="channel" />}
              rowClick={(id) => `/channel/edit/${id}`}
              sx={tableSx}
            >
              <NumberField source="id" />
              <TextField source="name" />
              <GroupChips label="resources.channel.fields.group" sortBy="group" />
              <ChannelTypeField label="resources.channel.fields.type" sortBy="type" />
              <ChannelStatusField label="resources.channel.fields.status" sortBy="status" />
              <ResponseTimeField label="resources.channel.fields.response_time" sortBy="response_time" />
              <BalanceField label="resources.channel.fields.balance" sortBy="balance" />
              <NumberField source="priority" />
              <ChannelActions label="app.common.actions" />
            </Datagrid>
          }
          cards={
            <CardList
              title={
                <>
                  <NumberField source="id" sx={{ mr: 1, color: 'text.secondary' }} />
                  <TextField source="name" sx={{ fontWeight: 600 }} />
                </>
              }
              actions={<ChannelActions />}
              linkTo={editPath}
            >
              <div>
                <ChannelTypeField />
                <ChannelStatusField />
                <GroupChips />
              </div>
              <CardLine label="resources.channel.fields.response_time">
                <ResponseTimeField />
              </CardLine>
              <CardLine label="resources.channel.fields.balance">
                <BalanceField />
              </CardLine>
            </CardList>
          }
        />
      </List>
    </TitledPage>
  );
}
