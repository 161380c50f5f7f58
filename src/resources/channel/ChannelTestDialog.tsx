// A channel's test from its row: the model to test (when it has several) or
// all of them in turn, and a dialog with a result per model: passed or why
// not, in how long, the answer's first words, which key answered (masked),
// and a note when the system does not switch failing channels off.
import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Divider,
  List as MuiList,
  ListItem,
  ListItemText,
  ListSubheader,
  Menu,
  MenuItem,
  Stack,
  Typography,
} from '@mui/material';
import { useEffect, useRef, useState, type MouseEvent } from 'react';
import { useDataProvider, useTranslate, type RaRecord } from 'react-admin';
import type { SwitchboardDataProvider } from '../../dataProvider';
import type { ChannelTestResult } from '../../dataProvider/channelCalls';
import { errorMessage } from '../../dataProvider/errorMessage';
import { usePatchRecord } from '../shared/usePatchRecord';

/** One model's test in the dialog: under way, answered (passed or not), or the call itself failed. */
export interface TestRun {
  model: string;
  result?: ChannelTestResult;
  /** The call failed before any answer (network, refused by the server). */
  error?: string;
}

const stop = (event: MouseEvent) => event.stopPropagation();

/**
 * A channel's tests: one model (its default when none is named) or every
 * model in turn; each result goes into the dialog and onto the row (the
 * server keeps the time and error too).
 */
export function useChannelTest(record: RaRecord | undefined, models: string[]) {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const patchRecord = usePatchRecord('channel');
  const [runs, setRuns] = useState<TestRun[]>([]);
  const [open, setOpen] = useState(false);
  const [testing, setTesting] = useState(false);
  // a closed dialog stops a run of every model between two tests
  const live = useRef(false);
  useEffect(
    () => () => {
      live.current = false;
    },
    [],
  );

  const testOne = async (index: number, model: string | undefined) => {
    if (!record) return;
    try {
      const result = await dataProvider.testChannel(record.id, model);
      patchRecord(record.id, {
        response_time: Math.round(result.time * 1000),
        test_time: Math.floor(Date.now() / 1000),
        test_error: result.success ? '' : result.message || 'test failed',
      });
      setRuns((current) => current.map((run, at) => (at === index ? { model: result.model ?? run.model, result } : run)));
    } catch (error) {
      setRuns((current) => current.map((run, at) => (at === index ? { ...run, error: errorMessage(error) } : run)));
    }
  };

  /** Tests `names` in turn (`picked` false: one test of the channel's default, without naming it). */
  const start = async (names: string[], picked: boolean) => {
    live.current = true;
    setOpen(true);
    setTesting(true);
    setRuns(names.map((model) => ({ model })));
    for (const [index, model] of names.entries()) {
      if (!live.current) break;
      await testOne(index, picked ? model : undefined);
    }
    setTesting(false);
  };
  return {
    runs,
    open,
    testing,
    /** `model`: one of the channel's models; absent, its default (test model, else first). */
    test: (model?: string) => start([model ?? models[0] ?? ''], model !== undefined),
    testEvery: () => start(models, true),
    close: () => {
      live.current = false;
      setOpen(false);
    },
  };
}

/** The models a multi-model channel can be tested with, its default first, then "test every model". */
export function TestModelMenu({
  anchor,
  models,
  close,
  pick,
  pickEvery,
}: {
  anchor: HTMLElement | null;
  models: string[];
  close: () => void;
  pick: (model: string) => void;
  pickEvery: () => void;
}) {
  const translate = useTranslate();
  return (
    <Menu anchorEl={anchor} open={Boolean(anchor)} onClose={close} onClick={stop} aria-label={translate('app.channel.test_model_pick')}>
      <ListSubheader>{translate('app.channel.test_model_pick')}</ListSubheader>
      {models.map((model, index) => (
        <MenuItem
          key={model}
          data-testid={`test-model-${model}`}
          onClick={() => {
            close();
            pick(model);
          }}
        >
          <ListItemText primary={model} secondary={index === 0 ? translate('app.channel.test_model_default') : undefined} />
        </MenuItem>
      ))}
      <Divider />
      <MenuItem
        data-testid="test-every-model"
        onClick={() => {
          close();
          pickEvery();
        }}
      >
        <ListItemText primary={translate('app.channel.test_every_model')} />
      </MenuItem>
    </Menu>
  );
}

/** What one model's test said: passed or failed (or slow), its time, the reply's first words and the key. */
function RunItem({ run }: { run: TestRun }) {
  const translate = useTranslate();
  const { result, error } = run;
  let chip = <Chip size="small" variant="outlined" label={translate('app.channel.test_running')} />;
  let said = '';
  if (error) {
    chip = <Chip size="small" color="error" label={translate('app.channel.test_failed')} />;
    said = error;
  } else if (result) {
    let label = result.success ? 'app.channel.test_passed' : 'app.channel.test_failed';
    if (result.slow) label = 'app.channel.test_slow';
    chip = <Chip size="small" color={result.success ? 'success' : 'error'} label={translate(label)} />;
    said = result.success
      ? translate('app.channel.test_answered_in', { seconds: result.time.toFixed(2) })
      : result.message || translate('app.errors.request_failed');
  }
  const keyText =
    result?.key &&
    (result.keyIndex
      ? translate('app.channel.test_key_index', { key: result.key, index: result.keyIndex })
      : translate('app.channel.test_key', { key: result.key }));
  return (
    <ListItem disableGutters divider data-testid={`test-result-${run.model}`} sx={{ display: 'block' }}>
      <Stack direction="row" sx={{ alignItems: 'center', gap: 1, mb: 0.5 }}>
        <Typography variant="subtitle2" component="span" sx={{ fontFamily: 'monospace' }}>
          {run.model}
        </Typography>
        {chip}
      </Stack>
      {said && (
        <Typography variant="body2" sx={{ overflowWrap: 'anywhere' }}>
          {said}
        </Typography>
      )}
      {result?.reply && (
        <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
          {translate('app.channel.test_reply', { reply: result.reply })}
        </Typography>
      )}
      {keyText && (
        <Typography variant="body2" color="text.secondary">
          {keyText}
        </Typography>
      )}
    </ListItem>
  );
}

interface ChannelTestDialogProps {
  name: string;
  runs: TestRun[];
  open: boolean;
  testing: boolean;
  /** Offered when the channel has more than one model. */
  onTestEvery?: () => void;
  onClose: () => void;
}

/** The results of a channel's test, one per model; a note when failing channels are never switched off. */
export function ChannelTestDialog({ name, runs, open, testing, onTestEvery, onClose }: ChannelTestDialogProps) {
  const translate = useTranslate();
  const autoDisableOff = runs.some((run) => run.result?.autoDisable === false);
  return (
    <Dialog open={open} onClose={onClose} onClick={stop} maxWidth="sm" fullWidth aria-labelledby="channel-test-title">
      <DialogTitle id="channel-test-title">{translate('app.channel.test_title', { name })}</DialogTitle>
      <DialogContent dividers>
        <MuiList dense disablePadding aria-live="polite">
          {runs.map((run) => (
            <RunItem key={run.model} run={run} />
          ))}
        </MuiList>
        {autoDisableOff && (
          <Box sx={{ mt: 2 }}>
            <Alert severity="info" data-testid="auto-disable-off">
              {translate('app.channel.auto_disable_off')}
            </Alert>
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        {onTestEvery && (
          <Button onClick={onTestEvery} disabled={testing}>
            {translate('app.channel.test_every_model')}
          </Button>
        )}
        <Button onClick={onClose}>{translate('app.lists.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
