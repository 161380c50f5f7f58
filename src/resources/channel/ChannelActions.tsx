// Row actions of the channel list (test, enable/disable, edit, delete) and the
// list footer's bulk actions (add, test all, update all balances, refresh).
import AccountBalanceWalletIcon from '@mui/icons-material/AccountBalanceWallet';
import AddIcon from '@mui/icons-material/Add';
import NetworkCheckIcon from '@mui/icons-material/NetworkCheck';
import RefreshIcon from '@mui/icons-material/Refresh';
import { Box, Button, Stack } from '@mui/material';
import { useState } from 'react';
import { Pagination, useDataProvider, useRecordContext, useRefresh, useTranslate, useUpdate } from 'react-admin';
import { Link as RouterLink, useNavigate } from 'react-router-dom';
import { ChannelStatus } from '../../../common/roles';
import { PAGE_SIZE, type SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../pages/errorMessage';
import { RowButton } from '../shared/RowButton';
import { usePatchRecord } from '../shared/usePatchRecord';

export function ChannelActions(_: { label?: string }) {
  const record = useRecordContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const navigate = useNavigate();
  const patchRecord = usePatchRecord('channel');
  const [update, { isPending: toggling }] = useUpdate();
  const [testing, setTesting] = useState(false);
  if (!record) return null;

  const test = async () => {
    setTesting(true);
    try {
      const result = await dataProvider.testChannel(record.id);
      // the server keeps the measured time whether the test passed or not
      patchRecord(record.id, { response_time: Math.round(result.time * 1000), test_time: Math.floor(Date.now() / 1000) });
      if (result.success) notice('app.channel.test_success', 'success', { name: record.name, seconds: result.time.toFixed(2) });
      else notice(result.message || 'app.errors.request_failed', 'error');
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setTesting(false);
    }
  };

  const toggle = () =>
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

  const remove = async () => {
    try {
      await dataProvider.delete('channel', { id: record.id, previousData: record });
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const enabled = record.status === ChannelStatus.enabled;
  return (
    <Stack direction="row" spacing={0.5}>
      <RowButton label="app.channel.test" loading={testing} onClick={test} />
      <RowButton
        label={enabled ? 'app.channel.disable' : 'app.channel.enable'}
        color={enabled ? 'warning' : 'success'}
        disabled={toggling}
        onClick={toggle}
      />
      <RowButton label="ra.action.edit" onClick={() => navigate(`/channel/edit/${record.id}`)} />
      <RowButton label="ra.action.delete" color="error" confirm="app.channel.delete_title" onClick={remove} />
    </Stack>
  );
}

/** Below the table: the add link, the two bulk jobs, refresh, then the pages. */
export function ChannelFooter() {
  const translate = useTranslate();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const [running, setRunning] = useState<'test' | 'balance' | null>(null);

  const run = (job: 'test' | 'balance') => async () => {
    setRunning(job);
    try {
      if (job === 'test') {
        await dataProvider.testAllChannels();
        notice('app.channel.test_all_started', 'info');
      } else {
        await dataProvider.updateAllChannelBalances();
        notice('app.channel.balances_started', 'info');
      }
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setRunning(null);
    }
  };

  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', justifyContent: 'space-between', gap: 1, px: 1, py: 1 }}>
      <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 1 }}>
        <Button component={RouterLink} to="/channel/add" size="small" variant="contained" disableElevation startIcon={<AddIcon />}>
          {translate('app.channel.add')}
        </Button>
        <Button size="small" variant="outlined" startIcon={<NetworkCheckIcon />} loading={running === 'test'} loadingPosition="start" disabled={running !== null} onClick={run('test')}>
          {translate('app.channel.test_all')}
        </Button>
        <Button size="small" variant="outlined" startIcon={<AccountBalanceWalletIcon />} loading={running === 'balance'} loadingPosition="start" disabled={running !== null} onClick={run('balance')}>
          {translate('app.channel.update_balances')}
        </Button>
        <Button size="small" startIcon={<RefreshIcon />} onClick={() => refresh()}>
          {translate('ra.action.refresh')}
        </Button>
      </Stack>
      <Pagination rowsPerPageOptions={[PAGE_SIZE]} />
    </Box>
  );
}
