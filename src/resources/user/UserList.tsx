// Manage users: group badges, statistics (quota, budget, used quota,
// requests), role and status, and the manage actions (all disabled on root
// rows). Rows open /user/edit/{id}. The server sorts (across pages), filters
// by role and status, and pages.
import ArrowDownwardIcon from '@mui/icons-material/ArrowDownward';
import ArrowUpwardIcon from '@mui/icons-material/ArrowUpward';
import BlockIcon from '@mui/icons-material/Block';
import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlineOutlined';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Chip, Stack, Tooltip, Typography } from '@mui/material';
import {
  Datagrid,
  List,
  NumberField,
  SearchInput,
  SelectInput,
  useDataProvider,
  useRecordContext,
  useRefresh,
  useTranslate,
  type RaRecord,
  type TranslateFunction,
} from 'react-admin';
import { isBudgetPeriod } from '../../../common/budgets';
import { Link as RouterLink, useNavigate } from 'react-router-dom';
import type { UserRecord } from '../../../common/records';
import { allowedManageActions, isRoot, UserStatus, type ManageAction } from '../../../common/roles';
import { readStoredUser } from '../../dataProvider/storage';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../dataProvider/errorMessage';
import { formatCount, formatQuota } from '../../quota';
import { AddActions } from '../shared/AddButton';
import { GroupChips } from '../shared/GroupChips';
import { ActiveFilters } from '../shared/ActiveFilters';
import { CardList } from '../shared/CardList';
import { listDefaults, ListBody, tableSx, ListEmpty } from '../shared/ListFrame';
import { RowActions } from '../shared/RowActions';
import { StatusChip } from '../shared/StatusChip';
import { TitledPage } from '../shared/TitledPage';

const ROLE = { 1: ['status.role.user', 'default'], 10: ['status.role.admin', 'warning'], 100: ['status.role.root', 'error'] } as const;
const USER_STATUS = { 1: ['status.user.enabled', 'success'], 2: ['status.user.disabled', 'error'] } as const;

/** Usernames longer than 15 characters show 12 and an ellipsis. */
export function shortName(username: string): string {
  return username.length > 15 ? `${username.slice(0, 12)}...` : username;
}

function UsernameField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext<UserRecord & RaRecord>();
  if (!record) return null;
  return (
    <Tooltip title={record.display_name || record.username}>
      <Typography
        component={RouterLink}
        to={`/user/edit/${record.id}`}
        variant="body2"
        sx={{ color: 'primary.main', textDecoration: 'none', fontWeight: 600 }}
      >
        {shortName(record.username)}
      </Typography>
    </Tooltip>
  );
}

type QuotaStatus = Parameters<typeof formatQuota>[1];

/** A user's budget as "$5.00 / month" (in the display unit), "—" without one. */
export function budgetText(
  record: Pick<UserRecord, 'budget_period' | 'budget_quota'>,
  translate: TranslateFunction,
  status: QuotaStatus,
): string {
  const period = record.budget_period;
  if (!isBudgetPeriod(period) || period === '') return translate('app.user.no_budget');
  return translate(`app.user.budget_${period}`, { amount: formatQuota(Number(record.budget_quota), status) });
}

function StatisticsField(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext<UserRecord & RaRecord>();
  const translate = useTranslate();
  const { status } = useStatus();
  if (!record) return null;
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
      <Tooltip title={translate('resources.user.fields.quota')}>
        <Chip
          size="small"
          color={record.quota < 0 ? 'error' : 'default'}
          label={
            record.quota < 0
              ? translate('app.common.owed', { amount: formatQuota(-record.quota, status) })
              : formatQuota(record.quota, status)
          }
        />
      </Tooltip>
      <Tooltip title={translate('resources.user.fields.budget')}>
        <Chip size="small" variant="outlined" label={budgetText(record, translate, status)} data-testid="user-budget" />
      </Tooltip>
      <Tooltip title={translate('resources.user.fields.used_quota')}>
        <Chip size="small" variant="outlined" label={formatQuota(record.used_quota, status)} />
      </Tooltip>
      <Tooltip title={translate('resources.user.fields.request_count')}>
        <Chip size="small" variant="outlined" label={formatCount(record.request_count)} />
      </Tooltip>
    </Stack>
  );
}

/** Disable (asked first) for an enabled user, enable for a disabled one; offered when the caller's role allows it. */
function toggleAction(enabled: boolean, act: (action: ManageAction) => () => Promise<void>, allowed: readonly ManageAction[]) {
  return enabled
    ? {
        key: 'toggle',
        label: 'app.user.disable',
        icon: <BlockIcon fontSize="small" />,
        color: 'warning' as const,
        confirm: 'app.user.disable_title',
        onClick: act('disable'),
        offered: allowed.includes('disable'),
      }
    : {
        key: 'toggle',
        label: 'app.user.enable',
        icon: <CheckCircleOutlineIcon fontSize="small" />,
        color: 'success' as const,
        onClick: act('enable'),
        offered: allowed.includes('enable'),
      };
}

/**
 * Only the actions the caller's role lets succeed are offered (common/roles.ts);
 * disabling asks first, like promote, demote and delete. The super admin's row
 * shows every action, all disabled, so it reads as protected rather than bare.
 */
function ManageActions(_: { label?: string }) {
  const record = useRecordContext<UserRecord & RaRecord>();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const navigate = useNavigate();
  if (!record) return null;
  const callerRole = readStoredUser()?.role ?? 0;
  const allowed = allowedManageActions(callerRole, { role: Number(record.role), status: Number(record.status) });
  // the server lets a caller edit only users below its own role (root edits anyone, itself included)
  const editable = isRoot(callerRole) || callerRole > Number(record.role);
  const act = (action: ManageAction) => async () => {
    try {
      await dataProvider.manageUser(record.username, action);
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  const enabled = record.status === UserStatus.enabled;
  const protectedRow = isRoot(Number(record.role));
  return (
    <RowActions
      actions={[
        toggleAction(enabled, act, allowed),
        {
          key: 'edit',
          label: 'ra.action.edit',
          icon: <EditIcon fontSize="small" />,
          onClick: () => navigate(`/user/edit/${record.id}`),
          offered: editable,
        },
        {
          key: 'promote',
          label: 'app.user.promote',
          icon: <ArrowUpwardIcon fontSize="small" />,
          confirm: 'app.user.promote_title',
          onClick: act('promote'),
          more: true,
          offered: allowed.includes('promote'),
        },
        {
          key: 'demote',
          label: 'app.user.demote',
          icon: <ArrowDownwardIcon fontSize="small" />,
          confirm: 'app.user.demote_title',
          onClick: act('demote'),
          more: true,
          offered: allowed.includes('demote'),
        },
        {
          key: 'delete',
          label: 'ra.action.delete',
          icon: <DeleteIcon fontSize="small" />,
          color: 'error' as const,
          confirm: 'app.user.delete_title',
          onClick: act('delete'),
          more: true,
          offered: allowed.includes('delete'),
        },
      ]
        // only what the caller's role lets succeed is offered at all
        .filter(({ offered }) => offered || protectedRow)
        .map(({ offered: _offered, ...action }) => (protectedRow ? { ...action, disabled: true } : action))}
    />
  );
}

const ROLE_CHOICES = Object.entries(ROLE).map(([id, [name]]) => ({ id: Number(id), name }));
const STATUS_CHOICES = Object.entries(USER_STATUS).map(([id, [name]]) => ({ id: Number(id), name }));

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <SelectInput
    key="role"
    source="role"
    label="resources.user.fields.role"
    choices={ROLE_CHOICES}
    emptyText="app.lists.any"
    alwaysOn
    sx={{ minWidth: 140 }}
    helperText={false}
  />,
  <SelectInput
    key="status"
    source="status"
    label="resources.user.fields.status"
    choices={STATUS_CHOICES}
    emptyText="app.lists.any"
    alwaysOn
    sx={{ minWidth: 140 }}
    helperText={false}
  />,
];

function UserFilters() {
  const translate = useTranslate();
  return (
    <ActiveFilters
      labels={{
        role: { label: 'resources.user.fields.role', format: (value) => translate(ROLE[Number(value) as 1]?.[0] ?? 'status.role.unknown') },
        status: {
          label: 'resources.user.fields.status',
          format: (value) => translate(USER_STATUS[Number(value) as 1]?.[0] ?? 'status.user.unknown'),
        },
      }}
    />
  );
}

const RoleField = (_: { label?: string; sortBy?: string }) => <StatusChip source="role" labels={ROLE as never} />;
const UserStatusField = (_: { label?: string; sortBy?: string }) => <StatusChip source="status" labels={USER_STATUS as never} />;

export function UserList() {
  return (
    <TitledPage title="app.user.title">
      <List {...listDefaults} title="app.user.title" filters={filters} actions={<AddActions to="/user/add" label="app.user.add" />}>
        <UserFilters />
        <ListBody
          table={
            <Datagrid empty={<ListEmpty />} bulkActionButtons={false} rowClick={(id) => `/user/edit/${id}`} sx={tableSx}>
              <NumberField source="id" />
              <UsernameField label="resources.user.fields.username" sortBy="username" />
              <GroupChips label="resources.user.fields.group" sortBy="group" />
              <StatisticsField label="app.user.statistics" sortBy="quota" />
              <RoleField label="resources.user.fields.role" sortBy="role" />
              <UserStatusField label="resources.user.fields.status" sortBy="status" />
              <ManageActions label="app.common.actions" />
            </Datagrid>
          }
          cards={
            <CardList title={<UsernameField />} actions={<ManageActions />} linkTo={(record) => `/user/edit/${record.id}`}>
              <div>
                <RoleField />
                <UserStatusField />
                <GroupChips />
              </div>
              <StatisticsField />
            </CardList>
          }
        />
      </List>
    </TitledPage>
  );
}
