// Other tab, root only: move a one-api or new-api database into this install,
// as `npm run import` does. A dry run first (the default), then the import;
// while it runs the server is asked every second how far it is, and the
// report is shown as the command prints it. useImportJob keeps the job's
// state; the section shows the form, the progress and the outcome.
import MoveDownIcon from '@mui/icons-material/MoveDown';
import { Alert, Box, Button, Checkbox, FormControlLabel, FormGroup, LinearProgress, Stack, TextField, Typography } from '@mui/material';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslate } from 'react-admin';
import type { ImportJobState } from '../../common/importJob';
import { settingsProvider } from '../dataProvider/settings';
import { errorMessage } from '../dataProvider/errorMessage';
import { SectionCard } from './OptionSection';

const POLL_MS = 1000;

type ImportOptions = Parameters<typeof settingsProvider.startImport>[0];

/** The import job as the server reports it, polled every second while it runs, and how to start one. */
function useImportJob() {
  const [state, setState] = useState<ImportJobState | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [signedOut, setSignedOut] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);

  // one poll for the component's life (it uses only state setters and the timer ref), so the effect below runs once
  const poll: () => Promise<void> = useCallback(async () => {
    try {
      const next = await settingsProvider.importState();
      setState(next);
      if (next.running) timer.current = setTimeout(() => void poll(), POLL_MS);
    } catch (error) {
      // an import into a fresh install replaces its root account, and with it this session
      if ((error as { status?: number }).status === 401) setSignedOut(true);
      else setProblem(errorMessage(error));
    }
  }, []);

  useEffect(() => {
    void poll();
    return () => clearTimeout(timer.current);
  }, [poll]);

  const start = async (options: ImportOptions) => {
    setProblem(null);
    setSignedOut(false);
    try {
      setState(await settingsProvider.startImport(options));
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void poll(), POLL_MS);
    } catch (error) {
      setProblem(errorMessage(error));
    }
  };
  return { state, problem, signedOut, start };
}

/** The running import's step and count, with a bar (indeterminate until the step's total is known). */
function ImportProgress({ progress }: { progress: ImportJobState['progress'] }) {
  const translate = useTranslate();
  return (
    <Box role="status">
      <Typography variant="body2">
        {translate('settings.import.progress', {
          step: progress?.step ?? 'read',
          done: progress?.done ?? 0,
          total: progress?.total ?? 0,
        })}
      </Typography>
      <LinearProgress
        variant={progress && progress.total > 0 ? 'determinate' : 'indeterminate'}
        value={progress && progress.total > 0 ? (100 * progress.done) / progress.total : undefined}
      />
    </Box>
  );
}

/** A finished import: its error, its refusal or its report. */
function ImportOutcome({ state }: { state: ImportJobState }) {
  const translate = useTranslate();
  return (
    <>
      {state.error && <Alert severity="error">{translate('settings.import.failed', { error: state.error })}</Alert>}
      {state.refused && <Alert severity="warning">{state.refused}</Alert>}
      {state.report && (
        <Box
          component="pre"
          aria-label={translate('settings.import.report')}
          sx={{ m: 0, p: 2, bgcolor: 'action.hover', borderRadius: 2, overflowX: 'auto', fontSize: 12 }}
        >
          {state.report}
        </Box>
      )}
    </>
  );
}

/** The import section: the source, the three choices, the button, then what the job reports. */
export function ImportSection() {
  const translate = useTranslate();
  const [source, setSource] = useState('');
  const [apply, setApply] = useState(false);
  const [merge, setMerge] = useState(false);
  const [withLogs, setWithLogs] = useState(false);
  const { state, problem, signedOut, start } = useImportJob();

  const running = state?.running === true;
  return (
    <SectionCard title={translate('settings.section.other_import')} help={translate('settings.import.help')}>
      <Stack spacing={2}>
        <TextField
          label={translate('settings.import.source')}
          helperText={translate('settings.import.source_help')}
          value={source}
          onChange={(event) => setSource(event.target.value)}
          disabled={running}
          fullWidth
          autoComplete="off"
        />
        <FormGroup row>
          <FormControlLabel
            control={<Checkbox checked={apply} onChange={(event) => setApply(event.target.checked)} disabled={running} />}
            label={translate('settings.import.apply')}
          />
          <FormControlLabel
            control={<Checkbox checked={merge} onChange={(event) => setMerge(event.target.checked)} disabled={running} />}
            label={translate('settings.import.merge')}
          />
          <FormControlLabel
            control={<Checkbox checked={withLogs} onChange={(event) => setWithLogs(event.target.checked)} disabled={running} />}
            label={translate('settings.import.with_logs')}
          />
        </FormGroup>
        <Box>
          <Button
            variant="contained"
            startIcon={<MoveDownIcon />}
            onClick={() => void start({ source: source.trim(), apply, merge, with_logs: withLogs })}
            disabled={running || source.trim() === ''}
          >
            {translate(apply ? 'settings.import.run_apply' : 'settings.import.run_dry')}
          </Button>
        </Box>
        {running && <ImportProgress progress={state?.progress} />}
        {problem && <Alert severity="error">{problem}</Alert>}
        {signedOut && <Alert severity="info">{translate('settings.import.signed_out')}</Alert>}
        {!running && state && <ImportOutcome state={state} />}
      </Stack>
    </SectionCard>
  );
}
