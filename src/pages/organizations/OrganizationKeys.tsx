// An organisation's keys: a member's own, or every key for the owner and
// admins (who may also make service keys, held by no member). A new key's
// secret is shown once, on creation; later it is copied through its own call.
import KeyIcon from '@mui/icons-material/Key';
import { Alert, Button, Checkbox, FormControlLabel, Stack, TextField, Typography } from '@mui/material';
import { useCallback, useState, type FormEvent } from 'react';
import { Confirm, useTranslate } from 'react-admin';
import { canManageKeys, createKeyProblem, type OrganizationActor } from '../../../common/organizations';
import { TokenStatus } from '../../../common/roles';
import { dataProvider } from '../../dataProvider';
import type { OrganizationKeyRecord, OrganizationView } from '../../dataProvider/organizationCalls';
import { LoadError } from '../../layout/LoadError';
import { Balance } from '../../resources/shared/QuotaField';
import { useCopy } from '../../resources/shared/useCopy';
import { RecordList, RecordRow, useAction, useLoaded } from './organizationShared';

function NewKey({ organization, actor, onCreated }: { organization: OrganizationView; actor: OrganizationActor; onCreated: () => void }) {
  const translate = useTranslate();
  const act = useAction();
  const [name, setName] = useState('');
  const [service, setService] = useState(false);
  const [secret, setSecret] = useState('');
  if (createKeyProblem(actor, false) && createKeyProblem(actor, true)) return null;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const answer: { made?: OrganizationKeyRecord } = {};
    const created = await act(async () => {
      answer.made = await dataProvider.createOrganizationKey(organization.id, { name: name.trim(), unlimited_quota: true, service });
    }, 'organizations.keys.created');
    if (created && answer.made) {
      setSecret(`sk-${answer.made.key}`);
      setName('');
      onCreated();
    }
  };
  return (
    <Stack spacing={1} sx={{ mb: 2 }}>
      <Stack component="form" onSubmit={(event) => void submit(event)} direction={{ xs: 'column', sm: 'row' }} spacing={1}>
        <TextField
          size="small"
          name="name"
          label={translate('organizations.keys.name')}
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        {canManageKeys(actor) && (
          <FormControlLabel
            control={<Checkbox checked={service} onChange={(event) => setService(event.target.checked)} />}
            label={translate('organizations.keys.service')}
          />
        )}
        <Button type="submit" variant="contained" disableElevation startIcon={<KeyIcon />} disabled={!name.trim()}>
          {translate('organizations.keys.add')}
        </Button>
      </Stack>
      {secret && (
        <Alert severity="success" onClose={() => setSecret('')}>
          {translate('organizations.keys.created')}:{' '}
          <Typography component="code" sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere' }} data-testid="organization-key-secret">
            {secret}
          </Typography>
        </Alert>
      )}
    </Stack>
  );
}

function KeyRow({
  organizationId,
  token,
  onChanged,
  onDelete,
}: {
  organizationId: number;
  token: OrganizationKeyRecord;
  onChanged: () => void;
  onDelete: () => void;
}) {
  const translate = useTranslate();
  const act = useAction();
  const copy = useCopy();
  const enabled = token.status === TokenStatus.enabled;
  const holder = token.member_username || translate('organizations.keys.service_holder');
  return (
    <RecordRow
      title={token.name}
      facts={
        <>
          {token.key} · {translate('organizations.keys.holder')} {holder} · {translate('organizations.fields.used')}{' '}
          <Balance quota={token.used_quota} /> · {translate(`organizations.status.${enabled ? 1 : 2}`)}
        </>
      }
      actions={
        <>
          <Button
            size="small"
            variant="outlined"
            onClick={() => void dataProvider.revealOrganizationKey(organizationId, token.id).then((key) => copy(`sk-${key}`))}
          >
            {translate('organizations.keys.copy')}
          </Button>
          <Button
            size="small"
            onClick={() =>
              void act(
                () => dataProvider.setOrganizationKeyStatus(organizationId, token.id, enabled ? TokenStatus.disabled : TokenStatus.enabled),
                'organizations.saved',
              ).then(onChanged)
            }
          >
            {translate(enabled ? 'organizations.keys.disable' : 'organizations.keys.enable')}
          </Button>
          <Button size="small" color="error" onClick={onDelete}>
            {translate('organizations.keys.delete')}
          </Button>
        </>
      }
    />
  );
}

export function OrganizationKeys({ organization, actor }: { organization: OrganizationView; actor: OrganizationActor }) {
  const act = useAction();
  const { data, failed, reload } = useLoaded(useCallback(() => dataProvider.organizationKeys(organization.id), [organization.id]));
  const [deleting, setDeleting] = useState<OrganizationKeyRecord | null>(null);
  return (
    <>
      <NewKey organization={organization} actor={actor} onCreated={reload} />
      {failed && <LoadError onRetry={reload} />}
      {data && (
        <RecordList empty="organizations.keys.none">
          {data.map((token) => (
            <KeyRow key={token.id} organizationId={organization.id} token={token} onChanged={reload} onDelete={() => setDeleting(token)} />
          ))}
        </RecordList>
      )}
      <Confirm
        isOpen={deleting !== null}
        title="organizations.keys.delete"
        content="organizations.keys.delete_confirm"
        translateOptions={{ name: deleting?.name ?? '' }}
        onClose={() => setDeleting(null)}
        onConfirm={() => {
          const target = deleting;
          setDeleting(null);
          if (target)
            void act(() => dataProvider.deleteOrganizationKey(organization.id, target.id), 'organizations.keys.deleted').then(reload);
        }}
      />
    </>
  );
}
