// The dashboard's card for someone who runs an organisation (its owner or an
// admin): a link to each such organisation's Usage tab, where its members',
// models' and keys' spend is. Nothing for anyone else.
import { Button, Stack, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { Link as RouterLink } from 'react-router-dom';
import { dataProvider } from '../dataProvider';
import { SectionCard } from './DashboardTables';
import { useDashboardTranslate } from './useDashboardTranslate';

export function ManagedOrganizations() {
  const translate = useDashboardTranslate();
  const { data } = useQuery({
    queryKey: ['organizations', 'self'],
    queryFn: () => dataProvider.myOrganizations(),
    retry: false,
    refetchOnWindowFocus: false,
  });
  const managed = (data ?? []).filter((organization) => organization.role === 'owner' || organization.role === 'admin');
  if (managed.length === 0) return null;
  return (
    <SectionCard id="managed-organizations" title={translate('dashboard.organization_usage.dashboard_title')}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('dashboard.organization_usage.dashboard_text')}
      </Typography>
      <Stack direction="row" useFlexGap sx={{ flexWrap: 'wrap', gap: 1 }}>
        {managed.map((organization) => (
          <Button
            key={organization.id}
            component={RouterLink}
            to={`/organization/${organization.id}?tab=usage`}
            variant="outlined"
            size="small"
          >
            {translate('dashboard.organization_usage.dashboard_open', { name: organization.name })}
          </Button>
        ))}
      </Stack>
    </SectionCard>
  );
}
