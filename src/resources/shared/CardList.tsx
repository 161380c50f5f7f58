// The list as cards, for phones: each record's title, its key facts and every
// row action (the same RowActions as the table, so nothing is out of reach).
// Tapping a card outside its actions opens the record, as a row click does.
import { Box, Card, CardContent, Stack, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { RecordContextProvider, useListContext, useTranslate, type RaRecord } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { ListEmpty } from './ListFrame';

export function CardList({
  title,
  children,
  actions,
  linkTo,
  onOpen,
  emptyDefaults,
}: {
  /** The card's heading (rendered with the record in context). */
  title: ReactNode;
  /** The record's key facts, one per line. */
  children?: ReactNode;
  actions?: ReactNode;
  /** Where a tap on the card goes; none: the card does not open anything. */
  linkTo?: (record: RaRecord) => string | undefined;
  /** What a tap on the card does when it goes nowhere (the log opens its drawer). */
  onOpen?: (record: RaRecord) => void;
  /** The filters the list always carries, which do not make it "filtered" when empty. */
  emptyDefaults?: Record<string, unknown>;
}) {
  const { data, isPending } = useListContext<RaRecord>();
  const navigate = useNavigate();
  if (isPending) return null;
  if (!data?.length) return <ListEmpty defaults={emptyDefaults} />;
  return (
    <Stack spacing={1} sx={{ p: 1 }} data-testid="card-list">
      {data.map((record) => {
        const target = linkTo?.(record);
        const onCard = onOpen ? () => onOpen(record) : undefined;
        const open = target ? () => void navigate(target) : onCard;
        return (
          <RecordContextProvider key={record.id} value={record}>
            <Card variant="outlined" data-testid="list-card" onClick={open} sx={open ? { cursor: 'pointer' } : undefined}>
              <CardContent sx={{ p: 1.5, '&:last-child': { pb: 1 } }}>
                <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, minWidth: 0 }}>
                  <Box sx={{ flexGrow: 1, minWidth: 0, fontWeight: 600, overflowWrap: 'anywhere' }}>{title}</Box>
                </Box>
                <Stack spacing={0.5} sx={{ mt: 0.5, '& > *': { display: 'flex', flexWrap: 'wrap', gap: 0.5, alignItems: 'center' } }}>
                  {children}
                </Stack>
                {actions && <Box sx={{ mt: 0.5, display: 'flex', justifyContent: 'flex-end' }}>{actions}</Box>}
              </CardContent>
            </Card>
          </RecordContextProvider>
        );
      })}
    </Stack>
  );
}

/** One labelled fact on a card: "Label: value". */
export function CardLine({ label, children }: { label: string; children: ReactNode }) {
  const translate = useTranslate();
  return (
    <Box>
      <Typography component="span" variant="body2" color="text.secondary">
        {translate(label)}:
      </Typography>
      {children}
    </Box>
  );
}
