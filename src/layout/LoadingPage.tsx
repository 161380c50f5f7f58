import { Box, CircularProgress, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';

/** The 'loading {page}...' placeholder shown while a page's code or data loads. */
export function LoadingPage({ page }: { page?: string }) {
  const translate = useTranslate();
  return (
    <Box sx={{ display: 'flex', alignItems: 'center', justifyContent: 'center', gap: 2, py: 10 }} role="status">
      <CircularProgress size={22} />
      <Typography color="text.secondary">{translate('app.common.loading_page', { page: page ?? '' })}</Typography>
    </Box>
  );
}
