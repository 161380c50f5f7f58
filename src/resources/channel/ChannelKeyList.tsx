// The keys of a multi-key channel, under its edit form: each masked (the
// server never sends one whole), with its state, last use, tallies and last
// error, and its own test, enable/disable and delete; keys are added typed or
// read from a file (the file is read here and sent as text).
import {
  Alert,
  Box,
  Button,
  Chip,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Confirm, useDataProvider, useTranslate } from 'react-admin';
import { ChannelKeyStatus, type ChannelKeyRecord } from '../../../common/records';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';
import { formatTimestamp } from '../shared/TimestampField';

/** A button that reads a text file of keys and hands its text over. */
export function KeysFileButton({ onText }: { onText: (text: string) => void }) {
  const translate = useTranslate();
  const notice = useNotice();
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <Button size="small" variant="outlined" onClick={() => input.current?.click()}>
        {translate('app.channel.keys_from_file')}
      </Button>
      <input
        ref={input}
        type="file"
        accept=".txt,.json,.csv,text/plain,application/json"
        hidden
        aria-label={translate('app.channel.keys_from_file')}
        onChange={(event) => {
          const file = event.target.files?.[0];
          event.target.value = '';
          if (!file) return;
          file.text().then(onText, (error: unknown) => notice(errorMessage(error), 'error'));
        }}
      />
    </>
  );
}

function KeyStatusChip({ status }: { status: number }) {
  const translate = useTranslate();
  if (status === ChannelKeyStatus.enabled) return <Chip size="small" color="success" label={translate('status.channel.enabled')} />;
  if (status === ChannelKeyStatus.autoDisabled)
    return <Chip size="small" color="warning" label={translate('status.channel.auto_disabled')} />;
  return <Chip size="small" color="error" label={translate('status.channel.disabled')} />;
}

/** A channel's keys, loaded and reloaded after each action on them (test, switch, delete, add). */
function useChannelKeys(channelId: string | number) {
  const notice = useNotice();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const [keys, setKeys] = useState<ChannelKeyRecord[] | undefined>();
  const [failed, setFailed] = useState(false);
  const [busy, setBusy] = useState<number | 'add' | undefined>();

  const load = useCallback(async () => {
    try {
      setKeys(await dataProvider.channelKeys(channelId));
      setFailed(false);
    } catch (error) {
      setFailed(true);
      notice(errorMessage(error), 'error');
    }
  }, [channelId, dataProvider, notice]);
  useEffect(() => {
    void load();
  }, [load]);

  /** Runs one action on a key, then reloads the list (tallies and errors move with it). */
  const act = async (target: number | 'add', action: () => Promise<void>) => {
    setBusy(target);
    try {
      await action();
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setBusy(undefined);
      await load();
    }
  };
  const test = (key: ChannelKeyRecord) =>
    act(key.id, async () => {
      const result = await dataProvider.testChannelKey(channelId, key.id);
      if (result.success) notice('app.channel.keys.tested', 'success', { key: key.key, seconds: result.time.toFixed(2) });
      else notice(result.message || 'app.errors.request_failed', 'error');
    });
  const toggle = (key: ChannelKeyRecord) =>
    act(key.id, async () => {
      await dataProvider.setChannelKeyStatus(
        channelId,
        key.id,
        key.status === ChannelKeyStatus.enabled ? ChannelKeyStatus.disabled : ChannelKeyStatus.enabled,
      );
    });
  const remove = (key: ChannelKeyRecord) =>
    act(key.id, async () => {
      await dataProvider.deleteChannelKey(channelId, key.id);
      notice('app.channel.keys.deleted', 'success');
    });
  const add = (adding: string, added: () => void) =>
    act('add', async () => {
      const result = await dataProvider.addChannelKeys(channelId, adding);
      added();
      notice('app.channel.keys.added', 'success', result);
    });
  return { keys, failed, busy, load, test, toggle, remove, add };
}

interface KeyTableProps {
  keys: ChannelKeyRecord[];
  /** An action is under way: every button waits. */
  locked: boolean;
  onTest: (key: ChannelKeyRecord) => void;
  onToggle: (key: ChannelKeyRecord) => void;
  onDelete: (key: ChannelKeyRecord) => void;
}

/** The keys, masked, with their status, last use, tallies, last error and actions. */
function KeyTable({ keys, locked, onTest, onToggle, onDelete }: KeyTableProps) {
  const translate = useTranslate();
  return (
    <TableContainer>
      {/* unwrapped cells: on a phone the table scrolls in its box rather than stacking a heading a character a line */}
      <Table size="small" aria-labelledby="channel-keys-title" sx={{ '& th, & td': { whiteSpace: 'nowrap' } }}>
        <TableHead>
          <TableRow>
            <TableCell>{translate('app.channel.keys.key')}</TableCell>
            <TableCell>{translate('app.channel.keys.status')}</TableCell>
            <TableCell>{translate('app.channel.keys.last_used')}</TableCell>
            <TableCell>{translate('app.channel.keys.calls')}</TableCell>
            <TableCell>{translate('app.channel.keys.last_error')}</TableCell>
            <TableCell>{translate('app.channel.keys.actions')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {keys.map((key) => (
            <TableRow key={key.id}>
              <TableCell sx={{ fontFamily: 'monospace' }}>{key.key}</TableCell>
              <TableCell>
                <KeyStatusChip status={key.status} />
              </TableCell>
              <TableCell>{key.last_used_at ? formatTimestamp(key.last_used_at) : translate('app.channel.keys.never_used')}</TableCell>
              <TableCell>
                {key.used_count} / {key.failed_count}
              </TableCell>
              <TableCell sx={{ maxWidth: 260, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }} title={key.last_error}>
                {key.last_error || '—'}
              </TableCell>
              <TableCell>
                <Stack direction="row" sx={{ gap: 0.5 }}>
                  <Button size="small" disabled={locked} onClick={() => onTest(key)}>
                    {translate('app.channel.keys.test')}
                  </Button>
                  <Button size="small" disabled={locked} onClick={() => onToggle(key)}>
                    {translate(key.status === ChannelKeyStatus.enabled ? 'app.channel.keys.disable' : 'app.channel.keys.enable')}
                  </Button>
                  <Button size="small" color="error" disabled={locked} onClick={() => onDelete(key)}>
                    {translate('app.channel.keys.delete')}
                  </Button>
                </Stack>
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

/** A multi-key channel's keys under its form: the table, and a box to add more (typed or from a file). */
export function ChannelKeyList({ channelId }: { channelId: string | number }) {
  const translate = useTranslate();
  const { keys, failed, busy, load, test, toggle, remove, add } = useChannelKeys(channelId);
  const [deleting, setDeleting] = useState<ChannelKeyRecord | undefined>();
  const [adding, setAdding] = useState('');

  return (
    // the form's own padding, so the list lines up with the fields above it inside the card
    <Box component="section" aria-labelledby="channel-keys-title" sx={{ width: '100%', maxWidth: 960, mt: 3, px: 2, pb: 2 }}>
      <Stack direction="row" sx={{ alignItems: 'center', gap: 1 }}>
        <Typography variant="h6" component="h2" id="channel-keys-title" sx={{ flexGrow: 1 }}>
          {translate('app.channel.keys.title')}
        </Typography>
        <Button size="small" onClick={() => void load()}>
          {translate('app.channel.keys.refresh')}
        </Button>
      </Stack>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('app.channel.keys.help')}
      </Typography>
      {failed && <Alert severity="error">{translate('app.channel.keys.load_failed')}</Alert>}
      {keys && keys.length === 0 && <Alert severity="info">{translate('app.channel.keys.empty')}</Alert>}
      {keys && keys.length > 0 && (
        <KeyTable
          keys={keys}
          locked={busy !== undefined}
          onTest={(key) => void test(key)}
          onToggle={(key) => void toggle(key)}
          onDelete={setDeleting}
        />
      )}
      <Stack sx={{ gap: 1, mt: 2 }}>
        <TextField
          label={translate('app.channel.keys.add_label')}
          helperText={translate('app.channel.keys.add_help')}
          value={adding}
          onChange={(event) => setAdding(event.target.value)}
          multiline
          minRows={3}
          autoComplete="off"
          fullWidth
        />
        <Stack direction="row" sx={{ gap: 1 }}>
          <Button
            variant="contained"
            size="small"
            disabled={!adding.trim() || busy !== undefined}
            onClick={() => void add(adding, () => setAdding(''))}
          >
            {translate('app.channel.keys.add')}
          </Button>
          <KeysFileButton onText={(text) => setAdding((current) => [current.trim(), text.trim()].filter(Boolean).join('\n'))} />
        </Stack>
      </Stack>
      <Confirm
        isOpen={deleting !== undefined}
        title="app.channel.keys.delete"
        content="app.channel.keys.delete_confirm"
        translateOptions={{ key: deleting?.key ?? '' }}
        onConfirm={() => {
          const key = deleting;
          setDeleting(undefined);
          if (key) void remove(key);
        }}
        onClose={() => setDeleting(undefined)}
      />
    </Box>
  );
}
