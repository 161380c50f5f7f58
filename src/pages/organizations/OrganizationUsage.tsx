// An organisation's usage over a period (common/organizationUsage.ts): its
// totals, then what each member, model and key spent, in the dashboard's
// cards and tables. The owner and admins see every key's; a member their own
// keys' only, and is told so. The period is one of the dashboard's presets.
import { Alert, Grid, Stack, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { useCallback, useState } from 'react';
import type { ModelUsage, TokenUsage, UsageTotals, UserUsage } from '../../../common/dashboard';
import type { OrganizationUsage } from '../../../common/organizationUsage';
import { DataTable, SectionCard, type Column } from '../../dashboard/DashboardTables';
import { toggleSx } from '../../dashboard/DashboardFilters';
import { queryOfView, RANGE_PRESETS, type RangePreset } from '../../dashboard/dashboardView';
import { useDashboardFormat } from '../../dashboard/format';
import { useDashboardTranslate } from '../../dashboard/useDashboardTranslate';
import { dataProvider } from '../../dataProvider';
import { LoadError } from '../../layout/LoadError';
import { useLoaded } from './organizationShared';

type Period = Exclude<RangePreset, 'custom'>;
const PERIODS = RANGE_PRESETS.filter((preset): preset is Period => preset !== 'custom');

/** A table's name column, then requests, prompt and completion tokens and spend. */
function useColumns<Row extends UsageTotals>(nameLabel: string, nameOf: (row: Row) => string): Column<Row>[] {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  return [
    {
      key: 'name',
      label: nameLabel,
      render: (row) => <span style={{ whiteSpace: 'normal', overflowWrap: 'anywhere' }}>{nameOf(row)}</span>,
    },
    {
      key: 'requests',
      label: translate('dashboard.organization_usage.requests'),
      numeric: true,
      render: (row) => format.count(row.requests),
    },
    {
      key: 'prompt',
      label: translate('dashboard.organization_usage.prompt'),
      numeric: true,
      render: (row) => format.count(row.prompt_tokens),
    },
    {
      key: 'completion',
      label: translate('dashboard.organization_usage.completion'),
      numeric: true,
      render: (row) => format.count(row.completion_tokens),
    },
    { key: 'spend', label: translate('dashboard.organization_usage.spend'), numeric: true, render: (row) => format.money(row.quota) },
  ];
}

function UsageTable<Row extends UsageTotals>({
  id,
  title,
  rows,
  columns,
  rowKey,
}: {
  id: string;
  title: string;
  rows: Row[];
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
}) {
  return (
    <SectionCard id={id} title={title}>
      <DataTable rows={rows} columns={columns} rowKey={rowKey} label={title} />
    </SectionCard>
  );
}

/** The answer: whose keys it covers, the totals, then the three tables. */
function UsageAnswer({ usage }: { usage: OrganizationUsage }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const text = (key: string) => translate(`dashboard.organization_usage.${key}`);
  const memberColumns = useColumns<UserUsage>(text('member'), (row) =>
    row.user_id ? row.username || translate('dashboard.tables.deleted', { id: row.user_id }) : text('no_member'),
  );
  const modelColumns = useColumns<ModelUsage>(text('model'), (row) => row.model);
  const keyColumns = useColumns<TokenUsage>(
    text('key'),
    (row) => row.token_name || translate('dashboard.tables.deleted', { id: row.token_id }),
  );
  return (
    <>
      {usage.scope === 'own' && <Alert severity="info">{text('own')}</Alert>}
      <Typography variant="body2" color="text.secondary" data-testid="organization-usage-totals">
        {translate('dashboard.range.showing', { start: format.dateTime(usage.start), end: format.dateTime(usage.end) })}
        {' · '}
        {translate('dashboard.organization_usage.totals', {
          spend: format.money(usage.totals.quota),
          requests: format.count(usage.totals.requests),
          prompt: format.count(usage.totals.prompt_tokens),
          completion: format.count(usage.totals.completion_tokens),
        })}
      </Typography>
      <Grid container spacing={2}>
        <Grid size={{ xs: 12, lg: 6 }}>
          <UsageTable
            id="organization-members"
            title={text('by_member')}
            rows={usage.by_member}
            columns={memberColumns}
            rowKey={(row) => String(row.user_id)}
          />
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <UsageTable
            id="organization-models"
            title={text('by_model')}
            rows={usage.by_model}
            columns={modelColumns}
            rowKey={(row) => row.model}
          />
        </Grid>
        <Grid size={{ xs: 12 }}>
          <UsageTable
            id="organization-keys"
            title={text('by_key')}
            rows={usage.by_key}
            columns={keyColumns}
            rowKey={(row) => String(row.token_id)}
          />
        </Grid>
      </Grid>
    </>
  );
}

export function OrganizationUsageTab({ organizationId }: { organizationId: number }) {
  const translate = useDashboardTranslate();
  const [period, setPeriod] = useState<Period>('7d');
  const load = useCallback(() => {
    const { start, end } = queryOfView({ range: period }, false);
    return dataProvider.organizationUsage(organizationId, start!, end!);
  }, [organizationId, period]);
  const { data: usage, failed, reload } = useLoaded(load);
  return (
    <Stack spacing={2} data-testid="organization-usage">
      <ToggleButtonGroup
        exclusive
        size="small"
        color="primary"
        value={period}
        sx={{ ...toggleSx, alignSelf: 'flex-start' }}
        onChange={(_, value: Period | null) => value && setPeriod(value)}
        aria-label={translate('dashboard.range.label')}
      >
        {PERIODS.map((preset) => (
          <ToggleButton key={preset} value={preset}>
            {translate(`dashboard.range.${preset}`)}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
      {failed && <LoadError onRetry={reload} />}
      {usage && !failed && <UsageAnswer usage={usage} />}
    </Stack>
  );
}
