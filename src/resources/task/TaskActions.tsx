// What the task's drawer offers beyond its facts: a finished video plays in
// the drawer (its bytes streamed through the console's own route, so the
// session cookie is enough) and downloads; a batch's output and error files
// download; a running batch or a queued or running video can be cancelled,
// after a confirmation, and the drawer and the list show its new status.
import DownloadIcon from '@mui/icons-material/Download';
import StopCircleOutlinedIcon from '@mui/icons-material/StopCircleOutlined';
import { Box, Button, Link, Stack, Typography } from '@mui/material';
import { useState } from 'react';
import { Confirm, useTranslate, type RaRecord } from 'react-admin';
import { dataProvider, taskUrls } from '../../dataProvider';
import { errorMessage } from '../../dataProvider/errorMessage';
import { useNotice } from '../../layout/notice';
import { textOf } from '../shared/textOf';

/** The statuses each kind can be cancelled in (as the server allows: routes/api/taskActions.ts). */
const CANCELLABLE: Record<string, string[]> = { video: ['queued', 'in_progress'], batch: ['validating', 'in_progress'] };

export const canCancel = (record: RaRecord) => (CANCELLABLE[textOf(record.kind)] ?? []).includes(textOf(record.status));

/** A finished video: the player (seeking asks the server for ranges) and a download link. */
export function VideoPreview({ record }: { record: RaRecord }) {
  const translate = useTranslate();
  return (
    <Stack spacing={1} sx={{ alignItems: 'flex-start' }}>
      <Box
        component="video"
        controls
        preload="metadata"
        src={taskUrls.content(record.id)}
        aria-label={translate('task.actions.video_preview')}
        data-testid="task-video"
        sx={{ width: '100%', maxHeight: 360, bgcolor: 'common.black', borderRadius: 1 }}
      />
      <Button component="a" href={taskUrls.download(record.id)} download startIcon={<DownloadIcon />} size="small" variant="outlined">
        {translate('task.actions.download_video')}
      </Button>
    </Stack>
  );
}

/** A batch's output and error files, each a download once the batch has written it. */
export function BatchFiles({ record }: { record: RaRecord }) {
  const translate = useTranslate();
  const files = (['output', 'error'] as const).filter((which) => textOf(record[`${which}_file_id`]) !== '');
  if (files.length === 0)
    return (
      <Typography variant="body2" color="text.secondary">
        {translate('task.actions.no_files')}
      </Typography>
    );
  return (
    <Stack spacing={0.75}>
      {files.map((which) => (
        <Link
          key={which}
          href={taskUrls.file(record.id, which)}
          download
          variant="body2"
          sx={{ display: 'inline-flex', alignItems: 'center', gap: 0.5 }}
          data-testid={`task-file-${which}`}
        >
          <DownloadIcon fontSize="small" aria-hidden />
          {translate(`task.actions.${which}_file`)}
          <Box component="code" sx={{ color: 'text.secondary', fontSize: 12, overflowWrap: 'anywhere' }}>
            {textOf(record[`${which}_file_id`])}
          </Box>
        </Link>
      ))}
    </Stack>
  );
}

/** Cancel, after a confirmation that says what it does to this kind; `onChanged` gets the task as it is now. */
export function CancelTaskButton({ record, onChanged }: { record: RaRecord; onChanged: (record: RaRecord) => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const cancel = async () => {
    setBusy(true);
    try {
      const current = await dataProvider.cancelTask(record.id);
      setConfirming(false);
      notice('task.actions.cancelled', 'success');
      onChanged({ ...record, ...current });
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(false);
    }
  };
  const kind = textOf(record.kind) === 'batch' ? 'batch' : 'video';
  return (
    <>
      <Button color="warning" variant="outlined" size="small" startIcon={<StopCircleOutlinedIcon />} onClick={() => setConfirming(true)}>
        {translate('task.actions.cancel')}
      </Button>
      <Confirm
        isOpen={confirming}
        loading={busy}
        title="task.actions.cancel_title"
        content={`task.actions.cancel_${kind}`}
        confirm="task.actions.cancel"
        cancel="task.actions.keep"
        confirmColor="warning"
        onConfirm={() => void cancel()}
        onClose={() => setConfirming(false)}
      />
    </>
  );
}
