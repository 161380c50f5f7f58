// /task: a user's asynchronous tasks (videos, batches), admins everyone's with
// a user filter and the owner's column; filters for kind and status. Newest
// first, ten a page. What a task holds while it runs and what it charged are
// money, shown as the log shows a request's; a row (or its button) opens the
// task in a drawer with its error and request id, its video or files, and a
// cancel while it runs. On a phone rows become cards and the filters fold
// behind a button.
import { useState, type MouseEvent } from 'react';
import {
  AutocompleteInput,
  List,
  SelectInput,
  TextField,
  useGetList,
  useRecordContext,
  useRefresh,
  useTranslate,
  type RaRecord,
} from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { Box, Link, Typography } from '@mui/material';
import type { UserRecord } from '../../../common/records';
import { isAdmin } from '../../../common/roles';
import { readStoredUser } from '../../dataProvider/storage';
import { CardLine } from '../shared/CardList';
import { DetailCards, DetailTable, OpenDetailsButton } from '../shared/DetailList';
import { FilterBar, FiltersToggle, useFoldingFilters } from '../shared/FilterBar';
import { listDefaults, ListBody, tableSx } from '../shared/ListFrame';
import { QuotaField } from '../shared/QuotaField';
import { TimestampField } from '../shared/TimestampField';
import { TitledPage } from '../shared/TitledPage';
import { textOf } from '../shared/textOf';
import { TASK_QUOTA_DIGITS, TaskDrawer } from './TaskDrawer';
import { KIND_CHOICES, STATUS_CHOICES, TaskKindField, TaskProgressField, TaskStatusField, useTaskWords } from './taskFields';

/** The table's money to four places (a task costs cents or more; the drawer shows six): ten columns fit 1440 px. */
const TABLE_QUOTA_DIGITS = 4;

const BIG_PAGE = { pagination: { page: 1, perPage: 100 }, sort: { field: 'id', order: 'DESC' as const } };

/** The owner picker (admins): a task list of one user's. */
function UserPicker(_: { source: string; alwaysOn?: boolean }) {
  const { data } = useGetList<UserRecord & RaRecord>('user', BIG_PAGE);
  const choices = (data ?? []).map((user) => ({ id: Number(user.id), name: String(user.username) }));
  return (
    <AutocompleteInput
      source="user_id"
      label="task.fields.user_id"
      choices={choices}
      translateChoice={false}
      sx={{ minWidth: 180 }}
      helperText={false}
    />
  );
}

/** The filters above the list: kind and status; the owner for admins. */
function filterInputs(admin: boolean) {
  const shrink = { inputLabel: { shrink: true }, select: { displayEmpty: true } };
  return [
    <SelectInput
      key="kind"
      source="kind"
      label="task.fields.kind"
      choices={KIND_CHOICES}
      emptyText="task.all"
      slotProps={shrink}
      alwaysOn
    />,
    <SelectInput
      key="status"
      source="status"
      label="task.fields.status"
      choices={STATUS_CHOICES}
      emptyText="task.all"
      slotProps={shrink}
      alwaysOn
    />,
    ...(admin ? [<UserPicker key="user_id" source="user_id" alwaysOn />] : []),
  ];
}

function TaskFilters({ onToggle, open }: { onToggle?: () => void; open: boolean }) {
  const translate = useTranslate();
  const words = useTaskWords();
  return (
    <FilterBar
      padding={{ pr: 1, pl: onToggle ? 1 : 0, pt: onToggle ? 1 : 0 }}
      toggle={
        onToggle && (
          <FiltersToggle open={open} onToggle={onToggle}>
            {translate('task.filters')}
          </FiltersToggle>
        )
      }
      labels={{
        kind: { label: 'task.fields.kind', format: (value) => words.kind(textOf(value)) },
        status: { label: 'task.fields.status', format: (value) => words.status(textOf(value)) },
        user_id: { label: 'task.fields.user_id', format: (value) => `#${textOf(value)}` },
      }}
    >
      {null}
    </FilterBar>
  );
}

/** The task's id, cut short to keep the row on one screen (the whole id in its tooltip and in the drawer). */
function TaskIdField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  if (!record) return null;
  const id = textOf(record.id);
  return (
    <Box
      component="span"
      title={id}
      sx={{
        display: 'inline-block',
        maxWidth: 120,
        overflow: 'hidden',
        textOverflow: 'ellipsis',
        verticalAlign: 'bottom',
        fontFamily: 'monospace',
        fontSize: 13,
      }}
    >
      {id}
    </Box>
  );
}

/** The owner's name, opening their account (admins). */
function OwnerField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  if (!record) return null;
  const name = textOf(record.username) || `#${textOf(record.user_id)}`;
  return (
    <Link
      component={RouterLink}
      to={`/user/edit/${textOf(record.user_id)}`}
      variant="body2"
      onClick={(event: MouseEvent) => event.stopPropagation()}
    >
      {name}
    </Link>
  );
}

interface ViewProps {
  admin: boolean;
  onOpen: (record: RaRecord) => void;
}

function TaskTable({ admin, onOpen }: ViewProps) {
  return (
    <DetailTable onOpen={onOpen} sx={tableSx}>
      <TaskIdField label="task.fields.id" sortable={false} />
      {admin && <OwnerField label="task.fields.user_id" sortable={false} />}
      <TaskKindField label="task.fields.kind" sortable={false} />
      <TextField source="model" label="task.fields.model" sortable={false} />
      <TaskStatusField label="task.fields.status" sortable={false} />
      <TaskProgressField label="task.fields.progress" sortable={false} />
      <QuotaField source="held_quota" label="task.fields.held_quota" digits={TABLE_QUOTA_DIGITS} sortable={false} />
      <QuotaField source="charged_quota" label="task.fields.charged_quota" digits={TABLE_QUOTA_DIGITS} sortable={false} />
      <TimestampField source="created_at" label="task.fields.created_at" />
      <TimestampField source="completed_at" label="task.fields.completed_at" />
      <OpenDetailsButton label="task.drawer.details" sortable={false} openLabel="task.drawer.open" onOpen={onOpen} />
    </DetailTable>
  );
}

function TaskCards({ admin, onOpen }: ViewProps) {
  return (
    <DetailCards
      title={
        <>
          <TaskKindField /> <TextField source="model" />
        </>
      }
      onOpen={onOpen}
      openLabel="task.drawer.open"
    >
      <div>
        <TaskStatusField />
        <TimestampField source="created_at" />
      </div>
      {admin && (
        <CardLine label="task.fields.user_id">
          <OwnerField />
        </CardLine>
      )}
      <CardLine label="task.fields.progress">
        <TaskProgressField />
      </CardLine>
      <CardLine label="task.fields.charged_quota">
        <QuotaField source="charged_quota" digits={TASK_QUOTA_DIGITS} />
      </CardLine>
      <CardLine label="task.fields.held_quota">
        <QuotaField source="held_quota" digits={TASK_QUOTA_DIGITS} />
      </CardLine>
    </DetailCards>
  );
}

export function TaskList() {
  const admin = isAdmin(readStoredUser()?.role);
  const translate = useTranslate();
  const [opened, setOpened] = useState<RaRecord>();
  const filters = useFoldingFilters();
  const refresh = useRefresh();
  // a cancelled task: the drawer shows its new status at once, the list once it has loaded again
  const changed = (record: RaRecord) => {
    setOpened(record);
    refresh();
  };
  return (
    <TitledPage title={admin ? 'task.title_all' : 'task.title_self'}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('task.intro')}
      </Typography>
      <List {...listDefaults} title="task.title_all" actions={false} filters={filters.shown(filterInputs(admin))} storeKey={false}>
        <TaskFilters open={filters.open} onToggle={filters.toggle} />
        <ListBody table={<TaskTable admin={admin} onOpen={setOpened} />} cards={<TaskCards admin={admin} onOpen={setOpened} />} />
        <TaskDrawer record={opened} admin={admin} onClose={() => setOpened(undefined)} onChanged={changed} />
      </List>
    </TitledPage>
  );
}
