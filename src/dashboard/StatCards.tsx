// The four figures at the top: the balance, and what today, the last 7 and
// the last 30 days came to (fixed windows, whatever range is chosen).
import AccountBalanceWalletOutlinedIcon from '@mui/icons-material/AccountBalanceWalletOutlined';
import CalendarMonthOutlinedIcon from '@mui/icons-material/CalendarMonthOutlined';
import DateRangeOutlinedIcon from '@mui/icons-material/DateRangeOutlined';
import TodayOutlinedIcon from '@mui/icons-material/TodayOutlined';
import { Box, Card, CardContent, Grid, Skeleton, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import type { Dashboard, UsageTotals } from '../../common/dashboard';
import { Balance } from '../resources/shared/QuotaField';
import { ErrorsLink, type ErrorLogPath } from './DashboardTables';
import { useDashboardFormat } from './format';
import { useDashboardTranslate } from './useDashboardTranslate';

function StatCard({
  id,
  icon,
  label,
  help,
  figure,
  details,
}: {
  id: string;
  icon: ReactNode;
  label: string;
  help?: string;
  figure: ReactNode;
  details?: ReactNode;
}) {
  return (
    <Card
      variant="outlined"
      sx={{ height: '100%', borderRadius: 3 }}
      component="section"
      aria-labelledby={`stat-${id}`}
      data-testid={`stat-${id}`}
    >
      <CardContent sx={{ p: { xs: 2, sm: 2.5 }, '&:last-child': { pb: { xs: 2, sm: 2.5 } } }}>
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, color: 'text.secondary', mb: 1 }}>
          {icon}
          <Typography id={`stat-${id}`} variant="subtitle2" component="h2" sx={{ fontWeight: 600 }}>
            {label}
          </Typography>
          {help && (
            <Typography variant="caption" sx={{ ml: 'auto', whiteSpace: 'nowrap' }}>
              {help}
            </Typography>
          )}
        </Box>
        <Typography
          variant="h4"
          component="p"
          sx={{ fontWeight: 700, fontSize: { xs: 26, sm: 30 }, lineHeight: 1.2, overflowWrap: 'anywhere' }}
          data-testid="stat-figure"
        >
          {figure}
        </Typography>
        {details && (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
            {details}
          </Typography>
        )}
      </CardContent>
    </Card>
  );
}

function UsageDetails({ totals, errorsTo }: { totals: UsageTotals; errorsTo: string }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const parts = [
    translate('dashboard.cards.requests', { count: format.count(totals.requests) }),
    translate('dashboard.cards.tokens', { count: format.count(totals.prompt_tokens + totals.completion_tokens) }),
  ].join(' · ');
  if (totals.errors <= 0) return <>{parts}</>;
  return (
    <>
      {parts}
      {' · '}
      <ErrorsLink count={totals.errors} to={errorsTo}>
        {translate('dashboard.cards.errors', { count: format.count(totals.errors) })}
      </ErrorsLink>
    </>
  );
}

const iconSx = { fontSize: 20 } as const;

const DAY = 86_400;

export function StatCards({ data, errorLog }: { data: Dashboard; errorLog: ErrorLogPath }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const now = Math.floor(Date.now() / 1000);
  // the windows' starts as the server counts them: today from 00:00 UTC
  const windows = [
    {
      id: 'today',
      icon: <TodayOutlinedIcon sx={iconSx} />,
      totals: data.today,
      help: translate('dashboard.cards.today_help'),
      start: now - (now % DAY),
    },
    { id: 'last_7_days', icon: <DateRangeOutlinedIcon sx={iconSx} />, totals: data.last_7_days, start: now - 7 * DAY },
    { id: 'last_30_days', icon: <CalendarMonthOutlinedIcon sx={iconSx} />, totals: data.last_30_days, start: now - 30 * DAY },
  ];
  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, sm: 6, lg: 3 }}>
        <StatCard
          id="balance"
          icon={<AccountBalanceWalletOutlinedIcon sx={iconSx} />}
          label={translate('dashboard.cards.balance')}
          figure={<Balance quota={data.balance} />}
          details={translate('dashboard.cards.balance_help')}
        />
      </Grid>
      {windows.map((window) => (
        <Grid key={window.id} size={{ xs: 12, sm: 6, lg: 3 }}>
          <StatCard
            id={window.id}
            icon={window.icon}
            label={translate(`dashboard.cards.${window.id}`)}
            help={window.help}
            figure={format.money(window.totals.quota)}
            details={
              <UsageDetails totals={window.totals} errorsTo={errorLog({ start_timestamp: window.start, end_timestamp: undefined })} />
            }
          />
        </Grid>
      ))}
    </Grid>
  );
}

export function StatCardsSkeleton() {
  return (
    <Grid container spacing={2}>
      {[0, 1, 2, 3].map((index) => (
        <Grid key={index} size={{ xs: 12, sm: 6, lg: 3 }}>
          <Card variant="outlined" sx={{ borderRadius: 3 }}>
            <CardContent>
              <Skeleton width="40%" />
              <Skeleton variant="text" sx={{ fontSize: 30 }} width="60%" />
              <Skeleton width="80%" />
            </CardContent>
          </Card>
        </Grid>
      ))}
    </Grid>
  );
}
