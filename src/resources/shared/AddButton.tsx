import AddIcon from '@mui/icons-material/Add';
import { Box, Button } from '@mui/material';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';

/** List toolbar with the spec's /{resource}/add link. */
export function AddActions({ to, label }: { to: string; label: string }) {
  const translate = useTranslate();
  return (
    // a plain row: react-admin's TopToolbar floats away on narrow screens
    <Box sx={{ display: 'flex', justifyContent: 'flex-end', alignItems: 'center', py: 1, ml: 'auto' }}>
      <Button
        component={RouterLink}
        to={to}
        variant="contained"
        disableElevation
        startIcon={<AddIcon />}
        size="small"
        sx={{ whiteSpace: 'nowrap' }}
      >
        {translate(label)}
      </Button>
    </Box>
  );
}
