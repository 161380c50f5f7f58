// /organization: the organisations the caller belongs to and, for site
// admins, every organisation with what they alone do: create one with its
// owner, top its balance up, switch it off and on, delete it.
import AddIcon from '@mui/icons-material/Add';
import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, TextField, Typography } from '@mui/material';
import { useCallback, useState, type FormEvent } from 'react';
import { Authenticated, Confirm, useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import type { OrganizationRecord } from '../../../common/organizations';
import { isAdmin } from '../../../common/roles';
import { dataProvider } from '../../dataProvider';
import { readStoredUser } from '../../dataProvider/storage';
import { LoadError } from '../../layout/LoadError';
import { Balance } from '../../resources/shared/QuotaField';
import { TitledPage } from '../../resources/shared/TitledPage';
import { RecordList, RecordRow, useAction, useLoaded } from './organizationShared';

function MyOrganizations() {
  const translate = useTranslate();
  const { data, failed, reload } = useLoaded(useCallback(() => dataProvider.myOrganizations(), []));
  return (
    <Box component="section" aria-labelledby="my-organizations" sx={{ mb: 4 }}>
      <Typography id="my-organizations" variant="h6" component="h2" sx={{ mb: 1 }}>
        {translate('organizations.mine')}
      </Typography>
      {failed && <LoadError onRetry={reload} />}
      {data && (
        <RecordList empty="organizations.none">
          {data.map((organization) => (
            <RecordRow
              key={organization.id}
              title={organization.name}
              facts={
                <>
                  {translate(`organizations.roles.${organization.role}`)} · {translate('organizations.fields.balance')}{' '}
                  <Balance quota={organization.quota} /> · {translate(`organizations.status.${organization.status}`)}
                </>
              }
              actions={
                <Button
                  component={RouterLink}
                  to={`/organization/${organization.id}`}
                  variant="outlined"
                  size="small"
                  // which row the repeated button opens, beginning with the word it shows
                  aria-label={`${translate('organizations.open')} ${organization.name}`}
                >
                  {translate('organizations.open')}
                </Button>
              }
            />
          ))}
        </RecordList>
      )}
    </Box>
  );
}

function CreateOrganization({ onCreated }: { onCreated: () => void }) {
  const translate = useTranslate();
  const act = useAction();
  const [name, setName] = useState('');
  const [owner, setOwner] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await act(() => dataProvider.createOrganization({ name: name.trim(), owner: owner.trim() }), 'organizations.created')) {
      setName('');
      setOwner('');
      onCreated();
    }
  };
  return (
    <Stack component="form" onSubmit={(event) => void submit(event)} direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mb: 2 }}>
      <TextField
        size="small"
        name="name"
        label={translate('organizations.fields.name')}
        value={name}
        onChange={(event) => setName(event.target.value)}
      />
      <TextField
        size="small"
        name="owner"
        label={translate('organizations.fields.owner')}
        value={owner}
        onChange={(event) => setOwner(event.target.value)}
      />
      <Button type="submit" variant="contained" disableElevation startIcon={<AddIcon />} disabled={!name.trim() || !owner.trim()}>
        {translate('organizations.create')}
      </Button>
    </Stack>
  );
}

function TopUpDialog({ organization, onClose }: { organization: OrganizationRecord | null; onClose: (changed: boolean) => void }) {
  const translate = useTranslate();
  const act = useAction();
  const [amount, setAmount] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!organization) return;
    if (await act(() => dataProvider.topUpOrganization(organization.id, Number(amount)), 'organizations.topped_up')) {
      setAmount('');
      onClose(true);
    }
  };
  return (
    <Dialog open={organization !== null} onClose={() => onClose(false)} aria-labelledby="top-up-title">
      <Box component="form" onSubmit={(event) => void submit(event)}>
        <DialogTitle id="top-up-title">
          {translate('organizations.top_up')} · {organization?.name}
        </DialogTitle>
        <DialogContent>
          <TextField
            autoFocus
            name="quota"
            type="number"
            label={translate('organizations.top_up_amount')}
            value={amount}
            onChange={(event) => setAmount(event.target.value)}
            sx={{ mt: 1 }}
            fullWidth
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => onClose(false)}>{translate('organizations.cancel')}</Button>
          <Button type="submit" variant="contained" disableElevation disabled={!(Number(amount) > 0)}>
            {translate('organizations.top_up')}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}

/** One organisation in the site admins' list, with its actions. */
function SiteOrganizationRow({
  organization,
  onTopUp,
  onToggle,
  onDelete,
}: {
  organization: OrganizationRecord;
  onTopUp: () => void;
  onToggle: () => void;
  onDelete: () => void;
}) {
  const translate = useTranslate();
  return (
    <RecordRow
      title={
        <RouterLink to={`/organization/${organization.id}`} style={{ color: 'inherit' }}>
          {organization.name}
        </RouterLink>
      }
      facts={
        <>
          #{organization.id} · {organization.owner_username || '—'} · {translate('organizations.fields.members')}{' '}
          {organization.member_count} · {translate('organizations.fields.balance')} <Balance quota={organization.quota} /> ·{' '}
          {translate(`organizations.status.${organization.status}`)}
        </>
      }
      actions={
        <>
          <Button size="small" variant="outlined" onClick={onTopUp}>
            {translate('organizations.top_up')}
          </Button>
          <Button size="small" onClick={onToggle}>
            {translate(organization.status === 1 ? 'organizations.disable' : 'organizations.enable')}
          </Button>
          <Button size="small" color="error" onClick={onDelete}>
            {translate('organizations.delete')}
          </Button>
        </>
      }
    />
  );
}

function AllOrganizations() {
  const translate = useTranslate();
  const act = useAction();
  const [keyword, setKeyword] = useState('');
  const { data, failed, reload } = useLoaded(useCallback(() => dataProvider.listOrganizations(keyword.trim()), [keyword]));
  const [toppingUp, setToppingUp] = useState<OrganizationRecord | null>(null);
  const [deleting, setDeleting] = useState<OrganizationRecord | null>(null);
  const toggle = (organization: OrganizationRecord) =>
    void act(
      () => dataProvider.updateOrganization({ id: organization.id, status: organization.status === 1 ? 2 : 1 }),
      'organizations.saved',
    ).then(reload);
  return (
    <Box component="section" aria-labelledby="all-organizations">
      <Typography id="all-organizations" variant="h6" component="h2" sx={{ mb: 1 }}>
        {translate('organizations.all')}
      </Typography>
      <CreateOrganization onCreated={reload} />
      <TextField
        size="small"
        type="search"
        name="keyword"
        label={translate('organizations.search')}
        value={keyword}
        onChange={(event) => setKeyword(event.target.value)}
        sx={{ mb: 2, width: { xs: '100%', sm: 320 } }}
      />
      {failed && <LoadError onRetry={reload} />}
      {data && (
        <RecordList empty="organizations.all_none">
          {data.map((organization) => (
            <SiteOrganizationRow
              key={organization.id}
              organization={organization}
              onTopUp={() => setToppingUp(organization)}
              onToggle={() => toggle(organization)}
              onDelete={() => setDeleting(organization)}
            />
          ))}
        </RecordList>
      )}
      <TopUpDialog
        organization={toppingUp}
        onClose={(changed) => {
          setToppingUp(null);
          if (changed) reload();
        }}
      />
      <Confirm
        isOpen={deleting !== null}
        title="organizations.delete"
        content="organizations.delete_confirm"
        translateOptions={{ name: deleting?.name ?? '' }}
        onClose={() => setDeleting(null)}
        onConfirm={() => {
          const target = deleting;
          setDeleting(null);
          if (target) void act(() => dataProvider.deleteOrganization(target.id), 'organizations.deleted').then(reload);
        }}
      />
    </Box>
  );
}

export default function OrganizationsPage() {
  const translate = useTranslate();
  return (
    <Authenticated>
      <TitledPage title="organizations.title">
        <Typography variant="body2" color="text.secondary" sx={{ mb: 3 }}>
          {translate('organizations.intro')}
        </Typography>
        <MyOrganizations />
        {isAdmin(readStoredUser()?.role) && <AllOrganizations />}
      </TitledPage>
    </Authenticated>
  );
}
