// /: for a signed-in user the usage dashboard; for a visitor the admin's home
// page content, or a welcome with what the gateway does;
// and the admin's notice, once per change.
import ApiIcon from '@mui/icons-material/Api';
import HubIcon from '@mui/icons-material/Hub';
import SavingsIcon from '@mui/icons-material/Savings';
import { Box, Button, Card, CardContent, Grid, Stack, Typography } from '@mui/material';
import { lazy, Suspense } from 'react';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { readStoredUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { LoadingPage } from '../layout/LoadingPage';
import { NoticeDialog } from '../layout/notice';
import { systemNameOf, useStatus } from '../layout/status';
import { ContentPage } from './ContentPage';

const loadHome = () => dataProvider.getHomePageContent();
const loadNotice = () => dataProvider.getNotice();

function Welcome() {
  const translate = useTranslate();
  const { status } = useStatus();
  const signedIn = readStoredUser() !== null;
  const baseUrl = `${status?.server_address || window.location.origin}/v1`;
  const features = [
    { icon: <ApiIcon color="primary" />, title: 'app.home.feature_api_title', text: 'app.home.feature_api_text' },
    { icon: <SavingsIcon color="primary" />, title: 'app.home.feature_quota_title', text: 'app.home.feature_quota_text' },
    { icon: <HubIcon color="primary" />, title: 'app.home.feature_channels_title', text: 'app.home.feature_channels_text' },
  ];
  return (
    <Stack spacing={3}>
      <Card
        elevation={0}
        sx={{ borderRadius: 4, color: 'common.white', background: 'linear-gradient(135deg, #1e3a8a 0%, #2563eb 55%, #0ea5e9 100%)' }}
      >
        <CardContent sx={{ p: { xs: 3, sm: 6 } }}>
          <Typography variant="overline" sx={{ opacity: 0.85, letterSpacing: 2 }}>
            {systemNameOf(status)}
          </Typography>
          <Typography variant="h3" component="h1" sx={{ fontWeight: 800, fontSize: { xs: 30, sm: 44 }, mb: 1.5 }}>
            {translate('app.home.title')}
          </Typography>
          <Typography sx={{ maxWidth: 640, opacity: 0.92, fontSize: { xs: 15, sm: 18 }, mb: 3 }}>
            {translate('app.home.subtitle')}
          </Typography>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ alignItems: { sm: 'center' } }}>
            <Button
              component={RouterLink}
              to={signedIn ? '/token' : '/login'}
              variant="contained"
              disableElevation
              sx={{ bgcolor: 'common.white', color: 'primary.dark', '&:hover': { bgcolor: 'grey.100' }, fontWeight: 700 }}
            >
              {translate(signedIn ? 'app.home.open_tokens' : 'app.home.get_started')}
            </Button>
            <Box sx={{ fontFamily: 'monospace', fontSize: 14, bgcolor: 'rgba(255,255,255,0.14)', px: 1.5, py: 0.75, borderRadius: 1.5 }}>
              {translate('app.home.base_url')}: {baseUrl}
            </Box>
          </Stack>
        </CardContent>
      </Card>
      <Grid container spacing={2}>
        {features.map((feature) => (
          <Grid key={feature.title} size={{ xs: 12, md: 4 }}>
            <Card variant="outlined" sx={{ borderRadius: 3, height: '100%' }}>
              <CardContent sx={{ p: 3 }}>
                {feature.icon}
                <Typography variant="h6" component="h2" sx={{ fontWeight: 700, mt: 1, mb: 0.5 }}>
                  {translate(feature.title)}
                </Typography>
                <Typography variant="body2" color="text.secondary">
                  {translate(feature.text)}
                </Typography>
              </CardContent>
            </Card>
          </Grid>
        ))}
      </Grid>
    </Stack>
  );
}

// the signed-in home is the usage dashboard, loaded on demand with its charts (never by the login page)
const DashboardPage = lazy(() => import('../dashboard/DashboardPage'));

export function HomePage() {
  const translate = useTranslate();
  const pageName = translate('app.menu.home');
  return (
    <>
      {readStoredUser() !== null ? (
        <Suspense fallback={<LoadingPage page={pageName} />}>
          <DashboardPage />
        </Suspense>
      ) : (
        <ContentPage load={loadHome} pageName={pageName} fallback={<Welcome />} />
      )}
      <NoticeDialog load={loadNotice} />
    </>
  );
}
