// The Operation tab's "Stored rows and retention" panel against a fake API (msw):
// per kind its rows, size and last prune as the server reports them, the
// retention fields saved with the section's button (no prune while one is
// unsaved), and "Prune now" followed by a progress bar, the server asked
// again every second, until the prune has ended and the last prune reads it.
import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';
import { OPTION_KEYS, OPTION_SPECS } from '../../common/options';
import type { PruneJob, RetentionReport } from '../../common/retention';
import { formatTimestamp } from '../../src/resources/shared/TimestampField';
import { formatBytes } from '../../src/settings/RetentionSection';
import { server } from './setup';
import { openSettingTab, personalTabHandlers } from './settingPage';

const STARTED = 1_780_000_000;
const ERRORS_PRUNED = 1_779_990_000;

function reportOf(job: PruneJob | null, logsRun: RetentionReport['kinds'][number]['last_run'] = null): RetentionReport {
  return {
    kinds: [
      {
        name: 'logs',
        option_key: 'LogRetentionDays',
        days: 30,
        rows: 1234,
        size_bytes: 2_621_440,
        size_estimated: true,
        last_run: logsRun,
      },
      {
        name: 'error_logs',
        option_key: 'ErrorLogRetentionDays',
        days: 30,
        rows: 56,
        size_bytes: 900,
        size_estimated: true,
        last_run: {
          started_at: ERRORS_PRUNED,
          finished_at: ERRORS_PRUNED + 2,
          removed: 3,
          cutoff: ERRORS_PRUNED - 30 * 86_400,
          manual: false,
        },
      },
    ],
    job,
  };
}

const jobOf = (state: PruneJob['state'], removed: number): PruneJob => ({
  id: 'prune-1',
  state,
  manual: true,
  started_at: STARTED,
  finished_at: state === 'running' ? 0 : STARTED + 3,
  total: 10,
  removed,
  kinds: [{ name: 'logs', total: 10, removed }],
});

let puts: Array<{ key: string; value: string }>;
let prunes: number;
/** What the next GETs of the report answer, in turn; the last one stays. */
let reports: RetentionReport[];

function serve() {
  puts = [];
  prunes = 0;
  server.use(
    http.get('*/api/option/', () =>
      HttpResponse.json({
        success: true,
        message: '',
        data: OPTION_KEYS.map((key) => ({ key, value: key === 'LogRetentionDays' ? '30' : OPTION_SPECS[key].default })),
      }),
    ),
    http.put('*/api/option/', async ({ request }) => {
      puts.push((await request.json()) as { key: string; value: string });
      return HttpResponse.json({ success: true, message: '' });
    }),
    http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: {} })),
    ...personalTabHandlers(),
    http.get('*/api/retention/', () =>
      HttpResponse.json({ success: true, message: '', data: reports.length > 1 ? reports.shift() : reports[0] }),
    ),
    http.post('*/api/retention/prune', () => {
      prunes += 1;
      return HttpResponse.json({ success: true, message: '', data: { started: true, job: jobOf('running', 0) } });
    }),
  );
}

async function openRetention() {
  const user = await openSettingTab('Operation');
  const panel = await screen.findByRole('region', { name: 'Stored rows and retention' });
  return { user, panel };
}

describe('the retention panel', () => {
  beforeEach(() => {
    reports = [reportOf(null)];
    serve();
  });

  it('shows each kind with its rows, size, retention field and last prune', async () => {
    const { panel } = await openRetention();
    const logs = await within(panel).findByRole('group', { name: 'Logs' });
    expect(within(logs).getByTestId('retention-stored')).toHaveTextContent('1,234 rows · ≈ 2.5 MB');
    expect(within(logs).getByTestId('retention-last-run')).toHaveTextContent('Never pruned yet');
    expect(within(logs).getByRole('spinbutton', { name: 'Keep logs for (days, 0 = forever)' })).toHaveValue(30);
    const errors = within(panel).getByRole('group', { name: 'Error logs' });
    expect(within(errors).getByTestId('retention-stored')).toHaveTextContent('56 rows · ≈ 900 B');
    expect(within(errors).getByTestId('retention-last-run')).toHaveTextContent(
      `Last prune ${formatTimestamp(ERRORS_PRUNED + 2)}: 3 removed`,
    );
    expect(within(errors).getByRole('spinbutton', { name: 'Keep error logs for (days, 0 = as long as logs)' })).toHaveValue(0);
    expect(screen.queryByTestId('prune-progress')).toBeNull();
  });

  it('saves a changed retention with the section, and prunes only once it is saved', async () => {
    const { user, panel } = await openRetention();
    const field = await within(panel).findByRole('spinbutton', { name: 'Keep error logs for (days, 0 = as long as logs)' });
    await user.clear(field);
    await user.type(field, '7');
    expect(within(panel).getByRole('button', { name: 'Prune now' })).toBeDisabled();
    expect(within(panel).getByText('Save the retention first, then prune.')).toBeInTheDocument();
    await user.click(within(panel).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'ErrorLogRetentionDays', value: '7' }]));
    await waitFor(() => expect(within(panel).getByRole('button', { name: 'Prune now' })).toBeEnabled());
    expect(prunes).toBe(0);
  });

  it('follows "Prune now" with a progress bar until the prune ends, then shows the last prune', async () => {
    const { user, panel } = await openRetention();
    // the first report is in before the next ones are queued
    await within(panel).findByRole('group', { name: 'Logs' });
    reports = [
      reportOf(jobOf('running', 4)),
      reportOf(jobOf('done', 10), {
        started_at: STARTED,
        finished_at: STARTED + 3,
        removed: 10,
        cutoff: STARTED - 30 * 86_400,
        manual: true,
      }),
    ];
    await user.click(await within(panel).findByRole('button', { name: 'Prune now' }));
    expect(prunes).toBe(1);
    const bar = await within(panel).findByRole('progressbar', { name: 'Prune progress' });
    expect(within(panel).getByTestId('prune-progress')).toHaveTextContent(/Pruning: [04] of 10 rows removed/);
    await waitFor(() => expect(bar).toHaveAttribute('aria-valuenow', '40'));
    expect(within(panel).getByRole('button', { name: 'Prune now' })).toBeDisabled();
    await waitFor(() => expect(within(panel).getByTestId('prune-progress')).toHaveTextContent('Prune done: 10 of 10 rows removed'));
    expect(within(panel).getByRole('progressbar', { name: 'Prune progress' })).toHaveAttribute('aria-valuenow', '100');
    const logs = within(panel).getByRole('group', { name: 'Logs' });
    expect(within(logs).getByTestId('retention-last-run')).toHaveTextContent(
      `Last prune ${formatTimestamp(STARTED + 3)} (pruned now): 10 removed`,
    );
    expect(within(panel).getByRole('button', { name: 'Prune now' })).toBeEnabled();
  });

  it('writes sizes in the unit that fits', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GB');
  });
});
