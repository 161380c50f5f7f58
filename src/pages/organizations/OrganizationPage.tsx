// /organization/:id: one organisation as its member sees it: its balance and
// their role, its keys (their own, or every key for the owner and admins)
// and its usage (theirs, or every key's for the owner and admins) and, for
// the owner and admins, its members and its audit rows. What each may do comes from
// common/organizations.ts, as on the server.
import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import { Box, Button, Chip, Stack, Tab, Tabs, Typography } from '@mui/material';
import { useCallback, useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import { Link as RouterLink, useParams, useSearchParams } from 'react-router-dom';
import { canManageMembers, OrganizationStatus, type OrganizationActor } from '../../../common/organizations';
import { dataProvider } from '../../dataProvider';
import type { OrganizationView } from '../../dataProvider/organizationCalls';
import { readStoredUser } from '../../dataProvider/storage';
import { LoadError } from '../../layout/LoadError';
import { Balance } from '../../resources/shared/QuotaField';
import { OrganizationAudit } from './OrganizationAudit';
import { OrganizationKeys } from './OrganizationKeys';
import { CapFacts } from './MemberCaps';
import { OrganizationMembers } from './OrganizationMembers';
import { OrganizationUsageTab } from './OrganizationUsage';
import { useLoaded } from './organizationShared';

/** The signed-in user's standing in the organisation, as the rules read it. */
export function actorOf(organization: OrganizationView): OrganizationActor {
  const user = readStoredUser();
  return {
    siteRole: user?.role ?? 0,
    userId: Number(user?.id ?? 0),
    membership: organization.role ?? undefined,
    organizationEnabled: organization.status === OrganizationStatus.enabled,
  };
}

function Heading({ organization }: { organization: OrganizationView }) {
  const translate = useTranslate();
  return (
    <Stack spacing={1} sx={{ mb: 2 }}>
      <Stack direction="row" spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Typography variant="h5" component="h1" sx={{ overflowWrap: 'anywhere' }}>
          {organization.name}
        </Typography>
        {organization.role && <Chip size="small" label={translate(`organizations.roles.${organization.role}`)} />}
        <Chip size="small" variant="outlined" label={translate(`organizations.status.${organization.status}`)} />
      </Stack>
      <Typography variant="body2" color="text.secondary">
        {translate('organizations.fields.balance')} <Balance quota={organization.quota} /> · {translate('organizations.fields.used')}{' '}
        <Balance quota={organization.used_quota} /> · {translate('organizations.fields.members')} {organization.member_count}
      </Typography>
      {organization.member_cap && (
        <Typography variant="body2" color="text.secondary">
          {translate('organizations.caps.yours')} <CapFacts cap={organization.member_cap} />
        </Typography>
      )}
    </Stack>
  );
}

type TabName = 'keys' | 'usage' | 'members' | 'audit';

function Organization({ id }: { id: number }) {
  const translate = useTranslate();
  const { data: organization, failed, reload } = useLoaded(useCallback(() => dataProvider.getOrganization(id), [id]));
  // ?tab=usage (the dashboard's link) opens the Usage tab
  const [searchParams] = useSearchParams();
  const [tab, setTab] = useState<TabName>(searchParams.get('tab') === 'usage' ? 'usage' : 'keys');
  if (failed) return <LoadError onRetry={reload} />;
  if (!organization) return null;
  const actor = actorOf(organization);
  const manages = canManageMembers(actor);
  return (
    <Box sx={{ width: '100%', minWidth: 0 }}>
      <Button component={RouterLink} to="/organization" size="small" startIcon={<ArrowBackIcon />} sx={{ mb: 1 }}>
        {translate('organizations.back')}
      </Button>
      <Heading organization={organization} />
      <Tabs
        value={tab}
        onChange={(_, value: TabName) => setTab(value)}
        variant="scrollable"
        scrollButtons={false}
        // four tabs fit 390 px once they give up MUI's 90 px minimum; scrolling is the fallback for longer labels
        sx={{ mb: 2, '& .MuiTab-root': { minWidth: { xs: 0, sm: 90 }, px: { xs: 1.5, sm: 2 } } }}
        aria-label={organization.name}
      >
        <Tab value="keys" label={translate('organizations.tabs.keys')} id="organization-tab-keys" aria-controls="organization-panel" />
        <Tab value="usage" label={translate('organizations.tabs.usage')} id="organization-tab-usage" aria-controls="organization-panel" />
        {manages && (
          <Tab
            value="members"
            label={translate('organizations.tabs.members')}
            id="organization-tab-members"
            aria-controls="organization-panel"
          />
        )}
        {manages && (
          <Tab value="audit" label={translate('organizations.tabs.audit')} id="organization-tab-audit" aria-controls="organization-panel" />
        )}
      </Tabs>
      <Box role="tabpanel" id="organization-panel" aria-labelledby={`organization-tab-${tab}`}>
        {tab === 'keys' && <OrganizationKeys organization={organization} actor={actor} />}
        {tab === 'usage' && <OrganizationUsageTab organizationId={organization.id} />}
        {tab === 'members' && manages && <OrganizationMembers organization={organization} actor={actor} onChanged={reload} />}
        {tab === 'audit' && manages && <OrganizationAudit organizationId={organization.id} />}
      </Box>
    </Box>
  );
}

export default function OrganizationPage() {
  const { id } = useParams();
  return (
    <Authenticated>
      <Organization id={Number(id)} />
    </Authenticated>
  );
}
