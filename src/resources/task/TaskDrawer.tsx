// One task in full, in a drawer over the list: what it is (kind, model,
// status, progress, owner and channel for admins, times), its money (what it
// holds while running, what it charged), the vendor's error when it failed,
// and the request id that created it (copied in a click, to find its log);
// a finished video plays and downloads, a batch's files download, and a task
// still running can be cancelled (TaskActions.tsx).
import { Box, Typography } from '@mui/material';
import { useTranslate, type RaRecord } from 'react-admin';
import { useStatus } from '../../layout/status';
import { formatQuota } from '../../quota';
import { DetailDrawer, DrawerSection } from '../shared/DetailDrawer';
import { Facts, RequestId } from '../shared/DrawerFacts';
import { formatTimestamp } from '../shared/TimestampField';
import { textOf } from '../shared/textOf';
import { BatchFiles, CancelTaskButton, canCancel, VideoPreview } from './TaskActions';
import { TaskStatusChip, useTaskWords } from './taskFields';

/** A task's money is a few cents: six decimals, as the log shows a request's. */
export const TASK_QUOTA_DIGITS = 6;

const when = (value: unknown) => (Number(value) > 0 ? formatTimestamp(Number(value)) : undefined);

/** The vendor's error ({ code, message }), or a line saying there is none. */
function TaskError({ error }: { error: unknown }) {
  const translate = useTranslate();
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (!code && !message)
    return (
      <Typography variant="body2" color="text.secondary">
        {translate('task.drawer.no_error')}
      </Typography>
    );
  return (
    <Facts
      facts={[
        ['task.fields.error_code', code ? <code>{textOf(code)}</code> : undefined],
        [
          'task.fields.error',
          message ? (
            <Box component="span" sx={{ color: 'error.main' }} data-testid="task-error">
              {textOf(message)}
            </Box>
          ) : undefined,
        ],
      ]}
    />
  );
}

interface DetailsProps {
  record: RaRecord;
  admin: boolean;
  /** The task changed (cancelled): its new row. */
  onChanged: (record: RaRecord) => void;
}

/** What the task made: a finished video, a batch's files; nothing for a video not finished. */
function TaskOutput({ record }: { record: RaRecord }) {
  const translate = useTranslate();
  const kind = textOf(record.kind);
  if (kind === 'video' && record.status === 'completed')
    return (
      <DrawerSection title={translate('task.actions.video')}>
        <VideoPreview record={record} />
      </DrawerSection>
    );
  if (kind !== 'batch') return null;
  return (
    <DrawerSection title={translate('task.actions.files')}>
      <BatchFiles record={record} />
    </DrawerSection>
  );
}

function TaskDetails({ record, admin, onChanged }: DetailsProps) {
  const translate = useTranslate();
  const { status } = useStatus();
  const words = useTaskWords();
  const requestId = textOf(record.request_id);
  const owner = textOf(record.username) || `#${textOf(record.user_id)}`;
  return (
    <>
      <DrawerSection title={translate('task.drawer.summary')}>
        <Facts
          facts={[
            ['task.fields.id', <code>{textOf(record.id)}</code>],
            ['task.fields.kind', words.kind(textOf(record.kind))],
            ['task.fields.model', textOf(record.model)],
            ['task.fields.status', <TaskStatusChip status={textOf(record.status)} />],
            ['task.fields.progress', `${Number(record.progress ?? 0)}%`],
            ['task.fields.user_id', admin ? owner : undefined],
            ['task.fields.channel_id', admin && Number(record.channel_id) > 0 ? `#${textOf(record.channel_id)}` : undefined],
            ['task.fields.created_at', when(record.created_at)],
            ['task.fields.updated_at', when(record.updated_at)],
            ['task.fields.completed_at', when(record.completed_at)],
            ['task.fields.request_id', requestId ? <RequestId requestId={requestId} copyLabel="task.drawer.copy_request_id" /> : undefined],
          ]}
        />
        {canCancel(record) && (
          <Box sx={{ mt: 1.5 }}>
            <CancelTaskButton record={record} onChanged={onChanged} />
          </Box>
        )}
      </DrawerSection>
      <TaskOutput record={record} />
      <DrawerSection title={translate('task.drawer.money')}>
        <Facts
          facts={[
            ['task.fields.held_quota', formatQuota(Number(record.held_quota ?? 0), status, TASK_QUOTA_DIGITS)],
            ['task.fields.charged_quota', formatQuota(Number(record.charged_quota ?? 0), status, TASK_QUOTA_DIGITS)],
          ]}
        />
      </DrawerSection>
      <DrawerSection title={translate('task.drawer.failure')}>
        <TaskError error={record.error as unknown} />
      </DrawerSection>
    </>
  );
}

/** The drawer for `record` (closed when there is none); Esc, the backdrop and the close button close it. */
export function TaskDrawer({
  record,
  admin,
  onClose,
  onChanged,
}: Omit<DetailsProps, 'record'> & { record?: RaRecord; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <DetailDrawer
      open={Boolean(record)}
      onClose={onClose}
      title={translate('task.drawer.title')}
      closeLabel={translate('task.drawer.close')}
      width={480}
      testId="task-drawer"
    >
      {record && <TaskDetails record={record} admin={admin} onChanged={onChanged} />}
    </DetailDrawer>
  );
}
