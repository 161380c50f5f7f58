import { Chip } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';

type ChipColor = 'default' | 'success' | 'error' | 'warning' | 'info' | 'primary' | 'secondary';

/** A status number shown as a coloured, translated badge (`statusOf`: the status read from the whole record, when the field alone is not the truth). */
export function StatusChip({
  source,
  labels,
  statusOf,
}: {
  source: string;
  labels: Record<number, [string, ChipColor]>;
  label?: string;
  statusOf?: (record: Record<string, unknown>) => number;
}) {
  const record = useRecordContext();
  const translate = useTranslate();
  const value = record && statusOf ? statusOf(record) : Number(record?.[source]);
  const [label, color] = labels[value] ?? ['app.common.unknown', 'default'];
  return <Chip size="small" label={translate(label)} color={color} variant={color === 'default' ? 'outlined' : 'filled'} />;
}
