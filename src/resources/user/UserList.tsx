// Manage users: group badges, statistics, role and status, and the manage
// actions (all disabled on root rows). Rows open /user/edit/{id}.
import { Chip, Stack, Tooltip, Typography } from '@mui/material';
import { Datagrid, List, NumberField, useDataProvider, useRecordContext, useRefresh, useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { allowedManageActions, type ManageAction } from '../../../common/roles';
import { readStoredUser } from '../../authProvider/storage';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../pages/errorMessage';
import { formatCount, formatQuota } from '../../quota';
import { AddActions } from '../shared/AddButton';
import { GroupChips } from '../shared/GroupChips';
import { listDefaults } from '../shared/ListFrame';
import { RowButton } from '../shared/RowButton';
import { StatusChip } from '../shared/StatusChip';
import { TitledPage } from '../shared/TitledPage';

const ROLE = { 1: ['status.role.user', 'default'], 10: ['status.role.admin', 'warning'], 100: ['status.role.root', 'error'] } as const;
const USER_STATUS = { 1: ['status.user.enabled', 'success'], 2: ['status.user.disabled', 'error'] } as const;

/** Usernames longer than 15 characters show 12 and an ellipsis. */
export function shortName(username: string): string {
  return username.length > 15 ? `${username.slice(0, 12)}...` : username;
}

function UsernameField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <Tooltip title={record.display_name || record.username}>
      <Typography component={RouterLink} to={`/user/edit/${record.id}`} variant="body2" sx={{ color: 'primary.main', textDecoration: 'none', fontWeight: 600 }}>
        {shortName(record.username)}
      </Typography>
    </Tooltip>
  );
}

function StatisticsField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { status } = useStatus();
  if (!record) return null;
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
      <Tooltip title={translate('resources.user.fields.quota')}><Chip size="small" color={record.quota < 0 ? 'error' : 'default'} label={record.quota < 0 ? translate('app.common.owed', { amount: formatQuota(-record.quota, status) }) : formatQuota(record.quota, status)} /></Tooltip>
      <Tooltip title={translate('resources.user.fields.used_quota')}><Chip size="small" variant="outlined" label={formatQuota(record.used_quota, status)} /></Tooltip>
      <Tooltip title={translate('resources.user.fields.request_count')}><Chip size="small" variant="outlined" label={formatCount(record.request_count)} /></Tooltip>
    </Stack>
  );
}

/** Only the actions the caller's role lets succeed are offered (common/roles.ts); disabling asks first, like promote, demote and delete. */
function ManageActions(_: { label?: string }) {
  const record = useRecordContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  if (!record) return null;
  const allowed = allowedManageActions(readStoredUser()?.role, { role: Number(record.role), status: Number(record.status) });
  const act = (action: ManageAction) => async () => {
    try {
      await dataProvider.manageUser(record.username, action);
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap' }}>
      {allowed.includes('promote') && <RowButton label="app.user.promote" confirm="app.user.promote_title" onClick={act('promote')} />}
      {allowed.includes('demote') && <RowButton label="app.user.demote" confirm="app.user.demote_title" onClick={act('demote')} />}
      {allowed.includes('disable') && <RowButton label="app.user.disable" color="warning" confirm="app.user.disable_title" onClick={act('disable')} />}
      {allowed.includes('enable') && <RowButton label="app.user.enable" color="success" onClick={act('enable')} />}
      {allowed.includes('delete') && <RowButton label="ra.action.delete" color="error" confirm="app.user.delete_title" onClick={act('delete')} />}
    </Stack>
  );
}

export function UserList() {
  return (
    <TitledPage title="app.user.title">
      <List {...listDefaults} title="app.user.title" actions={<AddActions to="/user/add" label="app.user.add" />}>
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <NumberField source="id" />
          <UsernameField label="resources.user.fields.username" sortBy="username" />
          <GroupChips label="resources.user.fields.group" sortBy="group" />
          <StatisticsField label="app.user.statistics" sortBy="quota" />
          <StatusChip source="role" label="resources.user.fields.role" labels={ROLE as never} />
          <StatusChip source="status" label="resources.user.fields.status" labels={USER_STATUS as never} />
          <ManageActions label="app.common.actions" />
        </Datagrid>
      </List>
    </TitledPage>
  );
}
