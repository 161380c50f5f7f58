import { Chip } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';

type ChipColor = 'default' | 'success' | 'error' | 'warning' | 'info' | 'primary' | 'secondary';

/** A status number shown as a coloured, translated badge. */
export function StatusChip({ source, labels }: { source: string; labels: Record<number, [string, ChipColor]>; label?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const value = Number(record?.[source]);
  const [label, color] = labels[value] ?? ['app.common.unknown', 'default' as ChipColor];
  return <Chip size="small" label={translate(label)} color={color} variant={color === 'default' ? 'outlined' : 'filled'} />;
}
