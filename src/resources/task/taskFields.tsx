// The task's fields the list, the cards and the drawer share: its status as a
// coloured chip (the colours of the other lists' chips: green done, red failed,
// blue running), its kind and its progress.
import { Box, Chip, LinearProgress } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';

type ChipColor = 'default' | 'success' | 'error' | 'warning' | 'info';

/** Each status a task's kind reports (a video's, a batch's), with its chip colour; any other shows as it is. */
export const TASK_STATUSES: Record<string, ChipColor> = {
  submitting: 'default',
  validating: 'default',
  queued: 'default',
  in_progress: 'info',
  finalizing: 'info',
  completed: 'success',
  failed: 'error',
  expired: 'warning',
  cancelling: 'warning',
  cancelled: 'warning',
  deleted: 'default',
};

export const TASK_KINDS = ['video', 'batch', 'message_batch'];

export const STATUS_CHOICES = Object.keys(TASK_STATUSES).map((status) => ({ id: status, name: `task.status.${status}` }));
export const KIND_CHOICES = TASK_KINDS.map((kind) => ({ id: kind, name: `task.kind.${kind}` }));

/** A status or a kind in words: its translation when there is one, else the word the server sent. */
export function useTaskWords() {
  const translate = useTranslate();
  return {
    status: (status: string) => (status in TASK_STATUSES ? translate(`task.status.${status}`) : status),
    kind: (kind: string) => (TASK_KINDS.includes(kind) ? translate(`task.kind.${kind}`) : kind),
  };
}

export function TaskStatusChip({ status }: { status: string }) {
  const words = useTaskWords();
  const color = TASK_STATUSES[status] ?? 'default';
  return <Chip size="small" label={words.status(status)} color={color} variant={color === 'default' ? 'outlined' : 'filled'} />;
}

export function TaskStatusField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  return record ? <TaskStatusChip status={String(record.status)} /> : null;
}

export function TaskKindField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const words = useTaskWords();
  return record ? <span>{words.kind(String(record.kind))}</span> : null;
}

/** The vendor's progress, 0 to 100: a bar and the percentage. */
export function TaskProgressField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  if (!record) return null;
  const progress = Math.max(0, Math.min(100, Number(record.progress ?? 0)));
  return (
    <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.5, minWidth: 80 }}>
      <LinearProgress
        variant="determinate"
        value={progress}
        aria-label={`${progress}%`}
        sx={{ flexGrow: 1, minWidth: 36, height: 6, borderRadius: 3 }}
        color={record.status === 'failed' ? 'error' : 'primary'}
      />
      <Box component="span" sx={{ fontVariantNumeric: 'tabular-nums', minWidth: 36, textAlign: 'right' }}>
        {progress}%
      </Box>
    </Box>
  );
}
