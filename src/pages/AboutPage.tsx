import { Card, CardContent, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { dataProvider } from '../dataProvider';
import { ContentPage } from './ContentPage';

const loadAbout = () => dataProvider.getAbout();

export default function AboutPage() {
  const translate = useTranslate();
  return (
    <ContentPage
      load={loadAbout}
      title={translate('app.about.title')}
      pageName={translate('app.menu.about')}
      fallback={
        <Card variant="outlined" sx={{ borderRadius: 3 }}>
          <CardContent sx={{ p: { xs: 2, sm: 4 } }}>
            <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 2 }}>
              {translate('app.about.title')}
            </Typography>
            <Typography color="text.secondary">{translate('app.about.default')}</Typography>
          </CardContent>
        </Card>
      }
    />
  );
}
