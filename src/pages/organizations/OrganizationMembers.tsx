// An organisation's members, for its owner and admins (and site admins): add
// someone by username, change a role, set their spending caps (MemberCaps.tsx),
// remove someone. Only the roles and
// people the rules allow are offered (common/organizations.ts); the server
// checks again.
import PersonAddIcon from '@mui/icons-material/PersonAdd';
import { Button, MenuItem, Stack, TextField } from '@mui/material';
import { useCallback, useState, type FormEvent } from 'react';
import { Confirm, useTranslate } from 'react-admin';
import {
  assignableRoles,
  changeRoleProblem,
  removeMemberProblem,
  setCapProblem,
  type OrganizationActor,
  type OrganizationMemberRecord,
  type OrganizationRole,
} from '../../../common/organizations';
import { dataProvider } from '../../dataProvider';
import type { OrganizationView } from '../../dataProvider/organizationCalls';
import { LoadError } from '../../layout/LoadError';
import { CapFacts, CapsDialog } from './MemberCaps';
import { RecordList, RecordRow, useAction, useLoaded } from './organizationShared';

function AddMember({ organization, actor, onAdded }: { organization: OrganizationView; actor: OrganizationActor; onAdded: () => void }) {
  const translate = useTranslate();
  const act = useAction();
  const roles = assignableRoles(actor).filter((role) => role !== 'owner');
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<OrganizationRole>('member');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await act(() => dataProvider.addOrganizationMember(organization.id, username.trim(), role), 'organizations.members.added')) {
      setUsername('');
      onAdded();
    }
  };
  return (
    <Stack component="form" onSubmit={(event) => void submit(event)} direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mb: 2 }}>
      <TextField
        size="small"
        name="username"
        label={translate('organizations.members.username')}
        value={username}
        onChange={(event) => setUsername(event.target.value)}
      />
      <TextField
        select
        size="small"
        name="role"
        label={translate('organizations.members.role')}
        value={role}
        onChange={(event) => setRole(event.target.value as OrganizationRole)}
        sx={{ minWidth: 140 }}
      >
        {roles.map((choice) => (
          <MenuItem key={choice} value={choice}>
            {translate(`organizations.roles.${choice}`)}
          </MenuItem>
        ))}
      </TextField>
      <Button type="submit" variant="contained" disableElevation startIcon={<PersonAddIcon />} disabled={!username.trim()}>
        {translate('organizations.members.add')}
      </Button>
    </Stack>
  );
}

function MemberRow({
  organization,
  actor,
  member,
  onChanged,
  onRemove,
  onCaps,
}: {
  organization: OrganizationView;
  actor: OrganizationActor;
  member: OrganizationMemberRecord;
  onChanged: () => void;
  onRemove: () => void;
  onCaps: () => void;
}) {
  const translate = useTranslate();
  const act = useAction();
  const target = { userId: member.user_id, role: member.role };
  // the current role, and every role this actor may move the member to
  const roles = (['member', 'admin', 'owner'] as const).filter((role) => role === member.role || !changeRoleProblem(actor, target, role));
  const changeRole = (role: OrganizationRole) =>
    void act(
      () => dataProvider.setOrganizationMemberRole(organization.id, member.user_id, role),
      'organizations.members.role_changed',
    ).then(onChanged);
  const leaving = member.user_id === actor.userId;
  return (
    <RecordRow
      title={
        member.display_name && member.display_name !== member.username ? `${member.display_name} (${member.username})` : member.username
      }
      facts={<CapFacts cap={member} />}
      actions={
        <>
          {!setCapProblem(actor, target) && (
            <Button size="small" onClick={onCaps}>
              {translate('organizations.caps.edit')}
            </Button>
          )}
          <TextField
            select
            size="small"
            label={translate('organizations.members.change_role', { name: member.username })}
            value={member.role}
            disabled={roles.length < 2}
            onChange={(event) => changeRole(event.target.value as OrganizationRole)}
            sx={{ minWidth: 160 }}
          >
            {roles.map((choice) => (
              <MenuItem key={choice} value={choice}>
                {translate(`organizations.roles.${choice}`)}
              </MenuItem>
            ))}
          </TextField>
          {!removeMemberProblem(actor, target) && (
            <Button size="small" color="error" onClick={onRemove}>
              {translate(leaving ? 'organizations.members.leave' : 'organizations.members.remove')}
            </Button>
          )}
        </>
      }
    />
  );
}

export function OrganizationMembers({
  organization,
  actor,
  onChanged,
}: {
  organization: OrganizationView;
  actor: OrganizationActor;
  onChanged: () => void;
}) {
  const act = useAction();
  const { data, failed, reload } = useLoaded(useCallback(() => dataProvider.organizationMembers(organization.id), [organization.id]));
  const [removing, setRemoving] = useState<OrganizationMemberRecord | null>(null);
  const [capping, setCapping] = useState<OrganizationMemberRecord | null>(null);
  const changed = () => {
    reload();
    onChanged();
  };
  return (
    <>
      <AddMember organization={organization} actor={actor} onAdded={changed} />
      {failed && <LoadError onRetry={reload} />}
      {data && (
        <RecordList empty="organizations.none">
          {data.map((member) => (
            <MemberRow
              key={member.user_id}
              organization={organization}
              actor={actor}
              member={member}
              onChanged={changed}
              onRemove={() => setRemoving(member)}
              onCaps={() => setCapping(member)}
            />
          ))}
        </RecordList>
      )}
      <CapsDialog
        organizationId={organization.id}
        member={capping}
        onClose={(changed) => {
          setCapping(null);
          if (changed) reload();
        }}
      />
      <Confirm
        isOpen={removing !== null}
        title="organizations.members.remove"
        content="organizations.members.remove_confirm"
        translateOptions={{ name: removing?.username ?? '' }}
        onClose={() => setRemoving(null)}
        onConfirm={() => {
          const target = removing;
          setRemoving(null);
          if (target)
            void act(() => dataProvider.removeOrganizationMember(organization.id, target.user_id), 'organizations.members.removed').then(
              changed,
            );
        }}
      />
    </>
  );
}
