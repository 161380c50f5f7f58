// The heading of a record form. Create pages read "New token"; edit pages
// name the record ("Edit token · my-key"), read through the same cached
// query the form itself loads, so no second request is made.
import { Box, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { useGetOne, useTranslate, type RaRecord } from 'react-admin';

export function FormPage({
  title,
  resource,
  id,
  nameOf,
  children,
}: {
  title: string;
  /** With `id`: the edited record, whose name joins the title. */
  resource?: string;
  id?: string;
  nameOf?: (record: Record<string, unknown>) => unknown;
  children: ReactNode;
}) {
  const translate = useTranslate();
  const { data } = useGetOne<RaRecord>(resource ?? '', { id: id ?? '' }, { enabled: Boolean(resource && id) });
  const name = data ? String((nameOf ? nameOf(data) : data.name) ?? '') : '';
  return (
    <Box sx={{ width: '100%', minWidth: 0 }}>
      <Typography variant="h5" component="h1" sx={{ mb: 1 }}>
        {translate(title)}
        {name && ` · ${name}`}
      </Typography>
      {children}
    </Box>
  );
}
