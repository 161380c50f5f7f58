import { Box, Button, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';

export function NotFoundPage() {
  const translate = useTranslate();
  return (
    <Box sx={{ textAlign: 'center', py: { xs: 6, sm: 12 } }}>
      <Typography variant="h1" component="p" sx={{ fontWeight: 800, color: 'primary.main', fontSize: { xs: 72, sm: 112 } }}>
        {translate('app.common.not_found_code')}
      </Typography>
      <Typography variant="h6" component="h1" color="text.secondary" sx={{ mb: 3 }}>
        {translate('app.common.not_found')}
      </Typography>
      <Button component={RouterLink} to="/" variant="contained" disableElevation>
        {translate('app.common.back_home')}
      </Button>
    </Box>
  );
}
