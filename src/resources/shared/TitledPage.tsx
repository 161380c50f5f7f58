import { Box, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslate } from 'react-admin';

/** A page with its heading; react-admin's own titles go to an app bar this layout does not have. */
export function TitledPage({ title, children }: { title: string; children: ReactNode }) {
  const translate = useTranslate();
  return (
    <Box sx={{ width: '100%', minWidth: 0 }}>
      <Typography variant="h5" component="h1" sx={{ mb: 1 }}>
        {translate(title)}
      </Typography>
      {children}
    </Box>
  );
}
