// Row actions of the channel list (test, with its results in ChannelTestDialog; enable/disable, edit; in "more":
// update balance, delete) and the list footer: add, the two long jobs with
// their progress and failures, refresh, pages.
import AccountBalanceWalletIcon from '@mui/icons-material/AccountBalanceWallet';
import AddIcon from '@mui/icons-material/Add';
import BlockIcon from '@mui/icons-material/Block';
import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlineOutlined';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import NetworkCheckIcon from '@mui/icons-material/NetworkCheck';
import RefreshIcon from '@mui/icons-material/Refresh';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  LinearProgress,
  List as MuiList,
  ListItem,
  ListItemText,
  Stack,
  Typography,
} from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useDataProvider, useRecordContext, useRefresh, useTranslate, useUpdate, type RaRecord } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { Link as RouterLink } from 'react-router-dom';
import { ChannelStatus } from '../../../common/roles';
import type { ChannelJob, SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';
import { ListPagination } from '../shared/ListFrame';
import { RowActions } from '../shared/RowActions';
import { textOf } from '../shared/textOf';
import { useBalanceUpdate } from './ChannelFields';
import { ChannelTestDialog, TestModelMenu, useChannelTest } from './ChannelTestDialog';

/** A channel's status switch (enabled ↔ disabled) and its deletion, each told in a notice. */
function useChannelChanges() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const [update, { isPending: toggling }] = useUpdate();
  const toggle = (record: RaRecord) =>
    update(
      'channel',
      {
        id: record.id,
        data: { status: record.status === ChannelStatus.enabled ? ChannelStatus.disabled : ChannelStatus.enabled },
        previousData: record,
        meta: { statusOnly: true },
      },
      {
        mutationMode: 'pessimistic',
        onSuccess: () => notice('app.common.operation_success', 'success'),
        onError: (error) => notice(errorMessage(error), 'error'),
      },
    );

  const remove = async (record: RaRecord) => {
    try {
      await dataProvider.delete('channel', { id: record.id, previousData: record });
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  return { toggle, remove, toggling };
}

/** The actions of one channel row. */
export function ChannelActions(_: { label?: string }) {
  const record = useRecordContext();
  const navigate = useNavigate();
  const { toggle, remove, toggling } = useChannelChanges();
  const models = record ? testModelChoices(record) : [];
  const tests = useChannelTest(record, models);
  const [modelMenu, setModelMenu] = useState<HTMLElement | null>(null);
  const { updating: updatingBalance, update: updateBalance } = useBalanceUpdate(record);
  if (!record) return null;

  const enabled = record.status === ChannelStatus.enabled;
  return (
    <>
      <TestModelMenu
        anchor={modelMenu}
        models={models}
        close={() => setModelMenu(null)}
        pick={(model) => void tests.test(model)}
        pickEvery={() => void tests.testEvery()}
      />
      <ChannelTestDialog
        name={textOf(record.name)}
        runs={tests.runs}
        open={tests.open}
        testing={tests.testing}
        onTestEvery={models.length > 1 ? () => void tests.testEvery() : undefined}
        onClose={tests.close}
      />
      <RowActions
        actions={[
          {
            key: 'test',
            label: 'app.channel.test',
            icon: <NetworkCheckIcon fontSize="small" />,
            loading: tests.testing,
            // one model: nothing to pick; several: a menu of them, the default first, and all of them
            onClick: (anchor) => (models.length > 1 ? setModelMenu(anchor) : void tests.test()),
          },
          {
            key: 'toggle',
            label: enabled ? 'app.channel.disable' : 'app.channel.enable',
            icon: enabled ? <BlockIcon fontSize="small" /> : <CheckCircleOutlineIcon fontSize="small" />,
            color: enabled ? 'warning' : 'success',
            disabled: toggling,
            onClick: () => void toggle(record),
          },
          {
            key: 'edit',
            label: 'ra.action.edit',
            icon: <EditIcon fontSize="small" />,
            onClick: () => void navigate(`/channel/edit/${record.id}`),
          },
          {
            key: 'balance',
            label: 'app.lists.update_balance',
            icon: <AccountBalanceWalletIcon fontSize="small" />,
            loading: updatingBalance,
            onClick: () => void updateBalance(),
            more: true,
          },
          {
            key: 'delete',
            label: 'ra.action.delete',
            icon: <DeleteIcon fontSize="small" />,
            color: 'error',
            confirm: 'app.channel.delete_title',
            onClick: () => void remove(record),
            more: true,
          },
        ]}
      />
    </>
  );
}

/** The channel's models for the test menu, its default test model first (its test model while listed, else its first model). */
export function testModelChoices(record: Record<string, unknown>): string[] {
  const models = [
    ...new Set(
      textOf(record.models)
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  const chosen = textOf(record.test_model);
  return models.includes(chosen) ? [chosen, ...models.filter((name) => name !== chosen)] : models;
}

/** How often a running job is asked for its progress. */
const POLL_MS = 1000;

/**
 * Follows a test-all or balance-all run: starts it (or joins the one already
 * running), polls its progress until done, then refreshes the list.
 */
function useChannelJob() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const [job, setJob] = useState<ChannelJob | null>(null);
  const [starting, setStarting] = useState<ChannelJob['kind'] | null>(null);
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  const start = async (kind: ChannelJob['kind']) => {
    setStarting(kind);
    try {
      let current = kind === 'test' ? await dataProvider.testAllChannels() : await dataProvider.updateAllChannelBalances();
      if (!live.current) return;
      setJob(current);
      while (current.state === 'running') {
        await new Promise((wake) => setTimeout(wake, POLL_MS));
        if (!live.current) return;
        current = await dataProvider.channelJob(current.id);
        if (!live.current) return;
        setJob(current);
      }
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      if (live.current) setStarting(null);
    }
  };
  return { job, running: starting, start, dismiss: () => setJob(null) };
}

const PROGRESS_MESSAGES: Record<ChannelJob['kind'], { counted: string; counting: string }> = {
  test: { counted: 'app.lists.job_test', counting: 'app.lists.job_test_counting' },
  balance: { counted: 'app.lists.job_balance', counting: 'app.lists.job_balance_counting' },
};

function JobReport({ job, running, onClose }: { job: ChannelJob; running: boolean; onClose: () => void }) {
  const translate = useTranslate();
  const [showFailures, setShowFailures] = useState(false);
  const args = { done: job.done, total: job.total, failed: job.failures.length, smart_count: job.total };
  if (running || job.state === 'running') {
    // a run another worker has claimed but not yet counted shares a total of 0: no "0 of 0"
    const message = job.total ? PROGRESS_MESSAGES[job.kind].counted : PROGRESS_MESSAGES[job.kind].counting;
    return (
      <Box sx={{ px: 1, pb: 1 }} role="status" aria-live="polite" data-testid="channel-job">
        <Typography variant="body2">{translate(message, args)}</Typography>
        <LinearProgress
          variant={job.total ? 'determinate' : 'indeterminate'}
          value={job.total ? (job.done / job.total) * 100 : 0}
          sx={{ mt: 0.5 }}
        />
      </Box>
    );
  }
  return (
    <Box sx={{ px: 1, pb: 1 }} data-testid="channel-job">
      <Alert
        severity={job.failures.length ? 'warning' : 'success'}
        role="status"
        onClose={onClose}
        action={
          job.failures.length ? (
            <Button color="inherit" size="small" onClick={() => setShowFailures(true)}>
              {translate('app.lists.failures')} ({job.failures.length})
            </Button>
          ) : undefined
        }
      >
        {translate(job.kind === 'test' ? 'app.lists.job_test_done' : 'app.lists.job_balance_done', args)}
      </Alert>
      <Dialog open={showFailures} onClose={() => setShowFailures(false)} maxWidth="md" fullWidth>
        <DialogTitle>{translate('app.lists.failures')}</DialogTitle>
        <DialogContent dividers>
          <MuiList dense data-testid="job-failures">
            {job.failures.map((failure) => (
              <ListItem key={failure.channel_id} disableGutters>
                <ListItemText
                  primary={`#${failure.channel_id} ${failure.name}`}
                  secondary={failure.message}
                  slotProps={{ secondary: { sx: { overflowWrap: 'anywhere' } } }}
                />
              </ListItem>
            ))}
          </MuiList>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setShowFailures(false)}>{translate('app.lists.close')}</Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}

/** Below the table: the add link, the two long jobs, refresh, then the pages; a job's progress and result above them. */
export function ChannelFooter() {
  const translate = useTranslate();
  const refresh = useRefresh();
  const { job, running, start, dismiss } = useChannelJob();
  return (
    <Box>
      {job && <JobReport job={job} running={running !== null} onClose={dismiss} />}
      <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', justifyContent: 'space-between', gap: 1, px: 1, py: 1 }}>
        <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 1 }}>
          <Button component={RouterLink} to="/channel/add" size="small" variant="contained" disableElevation startIcon={<AddIcon />}>
            {translate('app.channel.add')}
          </Button>
          <Button
            size="small"
            variant="outlined"
            startIcon={<NetworkCheckIcon />}
            loading={running === 'test'}
            loadingPosition="start"
            disabled={running !== null}
            onClick={() => void start('test')}
          >
            {translate('app.channel.test_all')}
          </Button>
          <Button
            size="small"
            variant="outlined"
            startIcon={<AccountBalanceWalletIcon />}
            loading={running === 'balance'}
            loadingPosition="start"
            disabled={running !== null}
            onClick={() => void start('balance')}
          >
            {translate('app.channel.update_balances')}
          </Button>
          <Button size="small" startIcon={<RefreshIcon />} onClick={() => refresh()}>
            {translate('ra.action.refresh')}
          </Button>
        </Stack>
        <ListPagination />
      </Box>
    </Box>
  );
}
