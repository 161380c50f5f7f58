// The signed-in home: a user's own usage, or for admins everyone's
// with the admin sections; root also gets the first-run checklist on top. The
// view (range, granularity, filters) lives in the URL; the answer comes from
// the data provider (common/dashboard.ts).
import InsightsOutlinedIcon from '@mui/icons-material/InsightsOutlined';
import { Alert, AlertTitle, Box, Button, Card, CardContent, Grid, LinearProgress, Skeleton, Stack, Typography } from '@mui/material';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useCallback, useMemo } from 'react';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import type { AdminDashboard, Dashboard } from '../../common/dashboard';
import type { LogFilter } from '../../common/records';
import { isAdmin, isRoot, LogType } from '../../common/roles';
import { readStoredUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { errorMessage } from '../dataProvider/errorMessage';
import { logListPath } from '../resources/log/logLink';
import {
  ChannelHealthCard,
  ErrorsLink,
  TopChannelsTable,
  TopModelsTable,
  TopTokensTable,
  TopUsersTable,
  type ErrorLogPath,
} from './DashboardTables';
import { DashboardFilters, useFilterOptions } from './DashboardFilters';
import { defaultGranularity, queryOfView, searchFromView, viewFromSearch, type DashboardView } from './dashboardView';
import { useDashboardFormat } from './format';
import { ManagedOrganizations } from './ManagedOrganizations';
import { SetupChecklist } from './SetupChecklist';
import { ResponseCacheLine } from './ResponseCacheLine';
import { StatCards, StatCardsSkeleton } from './StatCards';
import { useDashboardTranslate } from './useDashboardTranslate';

// the charts library loads after the cards: they show as soon as the answer is in
const DashboardCharts = lazy(() => import('./DashboardCharts'));

function ChartsSkeleton() {
  return (
    <Grid container spacing={2} aria-hidden>
      {[0, 1, 2, 3].map((index) => (
        <Grid key={index} size={{ xs: 12, md: 6 }}>
          <Card variant="outlined" sx={{ borderRadius: 3 }}>
            <CardContent>
              <Skeleton width="45%" sx={{ mb: 1 }} />
              <Skeleton variant="rounded" height={240} />
            </CardContent>
          </Card>
        </Grid>
      ))}
    </Grid>
  );
}

function ErrorState({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  const translate = useDashboardTranslate();
  return (
    <Alert
      severity="error"
      variant="outlined"
      action={
        <Button color="inherit" size="small" onClick={onRetry}>
          {translate('dashboard.error.retry')}
        </Button>
      }
    >
      <AlertTitle>{translate('dashboard.error.title')}</AlertTitle>
      {/* the data provider's messages are keys (fixed statuses) or the server's text */}
      {translate(errorMessage(error), { _: errorMessage(error) })}
    </Alert>
  );
}

function EmptyState({ admin }: { admin: boolean }) {
  const translate = useDashboardTranslate();
  return (
    <Card variant="outlined" sx={{ borderRadius: 3, borderStyle: 'dashed' }} data-testid="dashboard-empty">
      <CardContent sx={{ textAlign: 'center', py: { xs: 4, sm: 6 }, px: 3 }}>
        <InsightsOutlinedIcon color="primary" sx={{ fontSize: 48, mb: 1 }} />
        <Typography variant="h6" component="h2" sx={{ fontWeight: 700 }}>
          {translate('dashboard.empty.title')}
        </Typography>
        <Typography color="text.secondary" sx={{ maxWidth: 560, mx: 'auto', mt: 1, mb: admin ? 0 : 2 }}>
          {translate(admin ? 'dashboard.empty.text_admin' : 'dashboard.empty.text')}
        </Typography>
        {!admin && (
          <Button component={RouterLink} to="/token" variant="contained" disableElevation>
            {translate('dashboard.empty.open_tokens')}
          </Button>
        )}
      </CardContent>
    </Card>
  );
}

// stands in for the error count inside the translated sentence, where the count becomes a link
const ERRORS_MARK = '\u2063errors\u2063';

function RangeTotals({ data, errorLog }: { data: Dashboard; errorLog: ErrorLogPath }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const { totals } = data;
  const [before, after = ''] = translate('dashboard.totals', {
    spend: format.money(totals.quota),
    requests: format.count(totals.requests),
    errors: ERRORS_MARK,
    tokens: format.count(totals.prompt_tokens + totals.completion_tokens),
  }).split(ERRORS_MARK);
  return (
    <Typography variant="body2" color="text.secondary" data-testid="range-totals">
      {translate('dashboard.range.showing', { start: format.dateTime(data.start), end: format.dateTime(data.end) })}
      {' · '}
      {before}
      <ErrorsLink count={totals.errors} to={errorLog()} />
      {after}
    </Typography>
  );
}

/** The log filter matching the dashboard's answer: its range, and its model, channel, user and token when narrowed (admins). */
function errorLogOf(data: Dashboard | undefined, view: DashboardView, admin: boolean): ErrorLogPath {
  const user =
    admin && view.user_id && data && isAdminDashboard(data)
      ? data.top_users.find((row) => row.user_id === view.user_id)?.username
      : undefined;
  const token = view.token_id ? data?.top_tokens.find((row) => row.token_id === view.token_id)?.token_name : undefined;
  const base: LogFilter = {
    type: LogType.error,
    start_timestamp: data?.start,
    end_timestamp: data?.end,
    model_name: view.model,
    channel: admin ? view.channel_id : undefined,
    username: user,
    token_name: token,
  };
  return (filter = {}) => logListPath({ ...base, ...filter });
}

const isAdminDashboard = (data: Dashboard): data is AdminDashboard => 'top_users' in data;

/** The skeleton while the first answer loads. */
function DashboardLoading() {
  const translate = useDashboardTranslate();
  return (
    <Stack
      spacing={2}
      role="status"
      aria-busy="true"
      aria-label={translate('app.common.loading_page', { page: translate('dashboard.title') })}
    >
      <StatCardsSkeleton />
      <ChartsSkeleton />
    </Stack>
  );
}

interface DashboardAnswerProps {
  data: Dashboard;
  admin: boolean;
  errorLog: ErrorLogPath;
  /** Narrows the view to one token, user, model or channel (a table row's filter button). */
  narrow: (patch: Partial<DashboardView>) => void;
}

/** The answer: cards and totals, then charts and top tables (or the empty state), and channel health for admins. */
function DashboardAnswer({ data, admin, errorLog, narrow }: DashboardAnswerProps) {
  const empty = data.totals.requests === 0 && data.totals.errors === 0;
  return (
    <>
      <StatCards data={data} errorLog={errorLog} />
      <RangeTotals data={data} errorLog={errorLog} />
      <ResponseCacheLine data={data} />
      {empty ? (
        <EmptyState admin={admin} />
      ) : (
        <>
          <Suspense fallback={<ChartsSkeleton />}>
            <DashboardCharts data={data} errorLog={errorLog} />
          </Suspense>
          <Grid container spacing={2}>
            <Grid size={{ xs: 12, lg: isAdminDashboard(data) ? 6 : 12 }}>
              <TopTokensTable rows={data.top_tokens} onFilter={(token_id) => narrow({ token_id })} />
            </Grid>
            {isAdminDashboard(data) && (
              <>
                <Grid size={{ xs: 12, lg: 6 }}>
                  <TopUsersTable rows={data.top_users} onFilter={(user_id) => narrow({ user_id })} />
                </Grid>
                <Grid size={{ xs: 12 }}>
                  <TopModelsTable rows={data.by_model} totalQuota={data.totals.quota} onFilter={(model) => narrow({ model })} />
                </Grid>
                <Grid size={{ xs: 12 }}>
                  <TopChannelsTable rows={data.top_channels} onFilter={(channel_id) => narrow({ channel_id })} errorLog={errorLog} />
                </Grid>
              </>
            )}
          </Grid>
        </>
      )}
      {isAdminDashboard(data) && <ChannelHealthCard health={data.channel_health} />}
    </>
  );
}

export default function DashboardPage() {
  const translate = useDashboardTranslate();
  const role = readStoredUser()?.role;
  const admin = isAdmin(role);
  const [searchParams, setSearchParams] = useSearchParams();
  const search = searchParams.toString();
  const view = useMemo(() => viewFromSearch(new URLSearchParams(search)), [search]);
  const setView = useCallback((next: DashboardView) => setSearchParams(searchFromView(next)), [setSearchParams]);

  const { data, error, isPending, isFetching, isError, refetch } = useQuery({
    // keyed by the URL's view: a preset is turned into start/end at each fetch ("last 24 h" means now)
    queryKey: ['dashboard', admin ? 'admin' : 'self', search],
    queryFn: ({ signal }) => {
      const query = queryOfView(view, admin);
      return admin ? dataProvider.getAdminDashboard(query, signal) : dataProvider.getDashboard(query, signal);
    },
    placeholderData: keepPreviousData,
    retry: false,
    refetchOnWindowFocus: false,
  });

  const optionsOf = useFilterOptions(data, (id) => translate('dashboard.tables.deleted', { id }));
  const requested = queryOfView(view, admin);
  const granularity = view.granularity ?? data?.granularity ?? defaultGranularity(requested.start ?? 0, requested.end ?? 0);
  const narrow = (patch: Partial<DashboardView>) => setView({ ...view, ...patch });
  const errorLog = errorLogOf(data, view, admin);

  return (
    <Stack spacing={2.5} sx={{ width: '100%', minWidth: 0 }} data-testid="dashboard">
      <Box sx={{ position: 'relative' }}>
        {isFetching && !isPending && (
          <LinearProgress
            aria-label={translate('dashboard.refreshing')}
            sx={{ position: 'absolute', top: -10, left: 0, right: 0, height: 3, borderRadius: 1 }}
          />
        )}
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700 }}>
          {translate(admin ? 'dashboard.title_admin' : 'dashboard.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {translate(admin ? 'dashboard.subtitle_admin' : 'dashboard.subtitle')}
        </Typography>
      </Box>
      {isRoot(role) && <SetupChecklist />}
      <ManagedOrganizations />
      <DashboardFilters view={view} admin={admin} granularity={granularity} answered={data} optionsOf={optionsOf} onChange={setView} />
      {isError && <ErrorState error={error} onRetry={() => void refetch()} />}
      {!isError && (isPending || !data) && <DashboardLoading />}
      {!isError && !isPending && data && <DashboardAnswer data={data} admin={admin} errorLog={errorLog} narrow={narrow} />}
    </Stack>
  );
}
