// Operation tab: "Stored rows and retention". Per kind of stored rows (logs,
// error logs, audit rows: the server's list) how many there are, their room on
// disk, how many days they are kept (the section's option fields) and the
// last prune; "Prune now" starts the prune in the background and the bar
// follows it, the server asked every second, until it ends.
import ContentCutIcon from '@mui/icons-material/ContentCut';
import RefreshIcon from '@mui/icons-material/Refresh';
import SaveIcon from '@mui/icons-material/Save';
import { Alert, Box, Button, CircularProgress, Grid, LinearProgress, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslate } from 'react-admin';
import { isOptionKey } from '../../common/options';
import type { PruneJob, RetentionKindReport, RetentionReport } from '../../common/retention';
import { errorMessage } from '../dataProvider/errorMessage';
import { retentionProvider as defaultProvider, type RetentionProvider } from '../dataProvider/retention';
import { formatTimestamp } from '../resources/shared/TimestampField';
import { OptionInput } from './OptionFields';
import { SectionCard } from './OptionSection';
import type { SettingSection } from './sections';
import type { OptionForm } from './useOptionForm';

const POLL_MS = 1000;
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** Bytes in the largest unit that keeps the number at 1 or more (1024 to the next), one decimal past the bytes. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

const count = (value: number) => value.toLocaleString('en-US');

/** The report, polled every second while a prune runs; the prune this screen started or followed, kept once it ends. */
function useRetention(provider: RetentionProvider) {
  const [report, setReport] = useState<RetentionReport | null>(null);
  const [problem, setProblem] = useState('');
  const [followed, setFollowed] = useState<PruneJob | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);

  // one poll for the component's life (it uses only state setters, the provider and the timer ref)
  const load: (fresh?: boolean) => Promise<void> = useCallback(
    async (fresh = false) => {
      clearTimeout(timer.current);
      try {
        const next = await provider.report(fresh);
        setReport(next);
        setProblem('');
        if (next.job?.state === 'running') {
          setFollowed(next.job);
          timer.current = setTimeout(() => void load(), POLL_MS);
        } else if (next.job) {
          const ended = next.job;
          // the run this screen followed has ended: its last figures replace the running ones
          setFollowed((current) => (current?.id === ended.id ? ended : current));
        }
      } catch (error) {
        setProblem(errorMessage(error));
      }
    },
    [provider],
  );

  useEffect(() => {
    void load();
    return () => clearTimeout(timer.current);
  }, [load]);

  const prune = async () => {
    try {
      const started = await provider.prune();
      setFollowed(started.job);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void load(), POLL_MS);
    } catch (error) {
      setProblem(errorMessage(error));
    }
  };
  return { report, problem, followed, load, prune };
}

/** The prune's progress: rows removed of the rows to remove, the bar full once it ends. */
function PruneProgress({ job }: { job: PruneJob }) {
  const translate = useTranslate();
  const running = job.state === 'running';
  const value = job.total > 0 ? Math.min(100, (100 * job.removed) / job.total) : 100;
  return (
    <Box role="status" data-testid="prune-progress">
      <Typography variant="body2" sx={{ mb: 0.5 }}>
        {translate(`settings.retention.job_${job.state}`, { removed: count(job.removed), total: count(job.total) })}
      </Typography>
      <LinearProgress
        variant="determinate"
        value={running ? value : 100}
        color={job.state === 'failed' ? 'error' : 'primary'}
        aria-label={translate('settings.retention.progress_label')}
      />
    </Box>
  );
}

/** When the kind was last pruned and what went, or that it never was. */
function lastRunText(translate: ReturnType<typeof useTranslate>, kind: RetentionKindReport): string {
  const run = kind.last_run;
  if (!run) return translate('settings.retention.never_pruned');
  return translate(run.manual ? 'settings.retention.last_run_manual' : 'settings.retention.last_run', {
    time: formatTimestamp(run.finished_at),
    removed: count(run.removed),
  });
}

/** One kind: its name, rows and size, its retention field and its last prune. */
function KindLine({ kind, form, editable }: { kind: RetentionKindReport; form: OptionForm; editable: boolean }) {
  const translate = useTranslate();
  const size = formatBytes(kind.size_bytes);
  return (
    <Box role="group" aria-label={translate(`settings.retention.kind.${kind.name}`, { _: kind.name })} data-kind={kind.name}>
      <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 700 }}>
        {translate(`settings.retention.kind.${kind.name}`, { _: kind.name })}
      </Typography>
      <Typography variant="body2" data-testid="retention-stored">
        {translate('settings.retention.stored', {
          rows: count(kind.rows),
          smart_count: kind.rows,
          size: kind.size_estimated ? `≈ ${size}` : size,
        })}
      </Typography>
      <Box sx={{ my: 1.5 }}>
        {editable && isOptionKey(kind.option_key) ? (
          <OptionInput form={form} optionKey={kind.option_key} />
        ) : (
          <Typography variant="body2">
            {kind.days > 0 ? translate('settings.retention.kept_days', { days: kind.days }) : translate('settings.retention.kept_forever')}
          </Typography>
        )}
      </Box>
      <Typography variant="body2" color="text.secondary" data-testid="retention-last-run">
        {lastRunText(translate, kind)}
      </Typography>
    </Box>
  );
}

export function RetentionSection({
  section,
  form,
  provider = defaultProvider,
}: {
  section: SettingSection;
  form: OptionForm;
  provider?: RetentionProvider;
}) {
  const translate = useTranslate();
  const { report, problem, followed, load, prune } = useRetention(provider);
  const running = report?.job?.state === 'running' || followed?.state === 'running';
  const unsaved = form.isDirty(section.keys);
  const nothingToPrune = !report?.kinds.some((kind) => kind.days > 0);
  const save = async () => {
    await form.saveSection(section.keys);
    await load(); // the days the prune applies, as saved
  };
  let pruneHint = 'settings.retention.prune_help';
  if (unsaved) pruneHint = 'settings.retention.save_first';
  else if (nothingToPrune) pruneHint = 'settings.retention.nothing_to_prune';
  return (
    <SectionCard title={translate('settings.section.operation_retention')} help={translate('settings.section_help.operation_retention')}>
      {!report && !problem && <CircularProgress size={24} aria-label={translate('ra.page.loading')} />}
      {report && (
        <Grid container spacing={3}>
          {report.kinds.map((kind) => (
            <Grid key={kind.name} size={{ xs: 12, md: 12 / Math.min(3, Math.max(1, report.kinds.length)) }}>
              <KindLine kind={kind} form={form} editable={section.keys.some((key) => key === kind.option_key)} />
            </Grid>
          ))}
        </Grid>
      )}
      {problem && (
        <Alert severity="error" sx={{ mt: 2 }}>
          {translate(problem, { _: problem })}
        </Alert>
      )}
      {followed && (
        <Box sx={{ mt: 2 }}>
          <PruneProgress job={followed} />
        </Box>
      )}
      <Typography variant="body2" color="text.secondary" sx={{ mt: 2 }}>
        {translate(pruneHint)}
      </Typography>
      <Stack direction="row" spacing={1} sx={{ mt: 2, justifyContent: 'flex-end', flexWrap: 'wrap', rowGap: 1 }}>
        <Button variant="text" startIcon={<RefreshIcon />} onClick={() => void load(true)}>
          {translate('settings.retention.count_again')}
        </Button>
        <Button
          variant="outlined"
          startIcon={<ContentCutIcon />}
          disabled={running || unsaved || nothingToPrune}
          onClick={() => void prune()}
        >
          {translate('settings.retention.prune_now')}
        </Button>
        <Button
          variant="contained"
          disableElevation
          startIcon={<SaveIcon />}
          disabled={!section.keys.some((key) => form.canWrite(key)) || form.saving}
          onClick={() => void save()}
        >
          {translate('settings.save')}
        </Button>
      </Stack>
    </SectionCard>
  );
}
