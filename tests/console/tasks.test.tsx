// The Tasks page: a user's own tasks from /api/task/self (no owner column, no
// user filter sent), an admin's from /api/task/ with the owner and the
// filters (kind, status, user) on the URL; status chips in their colours, in
// English and Chinese; held and charged as money, as the log shows it; a
// row's drawer with the vendor's error and the request id, a finished video's
// player and download, a batch's files, and a cancel behind a confirmation;
// cards on a phone.
// A kind the page does not know of (a batch) shows as a video does.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { TaskList } from '../../src/resources/task/TaskList';
import { lightTheme } from '../../src/theme';
import { screenWidth } from './screenWidth';
import { server } from './setup';

const failedVideo = {
  id: 'video_68d7512d07848190b3e45da0ecbebcde',
  kind: 'video',
  model: 'sora-2',
  status: 'failed',
  progress: 40,
  held_quota: 0,
  charged_quota: 0,
  created_at: 1700000000,
  updated_at: 1700000090,
  completed_at: 1700000090,
  user_id: 2,
  error: { code: 'moderation_blocked', message: 'The prompt was refused by the moderation system.' },
  request_id: 'req_task_video_1',
};
const runningBatch = {
  ...failedVideo,
  id: 'batch_abc123',
  kind: 'batch',
  model: 'gpt-4o-mini',
  status: 'in_progress',
  progress: 55,
  held_quota: 250000,
  charged_quota: 4000,
  completed_at: null,
  error: null,
  request_id: 'req_task_batch_1',
};

type Who = { role: number; rows: Array<Record<string, unknown>> };

function renderTasks({ role, rows }: Who, search = '') {
  server.use(
    http.get('*/api/task/self', () => HttpResponse.json({ success: true, message: '', data: rows })),
    http.get('*/api/task/', () => HttpResponse.json({ success: true, message: '', data: rows })),
    http.get('*/api/user/', () =>
      HttpResponse.json({ success: true, message: '', data: [{ id: 2, username: 'bob', role: 1, status: 1 }] }),
    ),
  );
  localStorage.setItem('user', JSON.stringify({ id: role === 1 ? 2 : 1, username: role === 1 ? 'bob' : 'root', role, status: 1 }));
  localStorage.setItem('display_in_currency', 'true');
  localStorage.setItem('quota_per_unit', '500000');
  const seen: URL[] = [];
  server.events.on('request:start', ({ request }) => {
    seen.push(new URL(request.url));
  });
  render(
    <MemoryRouter initialEntries={[`/task${search}`]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="task">
          <Routes>
            <Route path="/task" element={<TaskList />} />
          </Routes>
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

const taskRequests = (seen: URL[]) => seen.filter((url) => url.pathname.startsWith('/api/task/'));
const filterSearch = (filter: Record<string, unknown>) => `?filter=${encodeURIComponent(JSON.stringify(filter))}`;

afterEach(() => {
  screenWidth(1440);
  localStorage.clear();
});

describe('TaskList', () => {
  it("lists a user's own tasks with coloured status chips, money as the log shows it, and opens a task's error and request id", async () => {
    screenWidth(1440);
    const seen = renderTasks({ role: 1, rows: [runningBatch, failedVideo] });
    const batchRow = (await screen.findByText('batch_abc123')).closest('tr') as HTMLElement;
    expect(screen.getByRole('heading', { name: 'My tasks' })).toBeInTheDocument();
    expect(within(batchRow).getByText('Batch')).toBeInTheDocument();
    expect(within(batchRow).getByText('In progress').closest('.MuiChip-root')).toHaveClass('MuiChip-colorInfo');
    expect(within(batchRow).getByText('55%')).toBeInTheDocument();
    expect(within(batchRow).getByText('$0.5000')).toBeInTheDocument();
    expect(within(batchRow).getByText('$0.0080')).toBeInTheDocument();
    const videoRow = screen.getByText(failedVideo.id).closest('tr') as HTMLElement;
    expect(within(videoRow).getByText('Failed').closest('.MuiChip-root')).toHaveClass('MuiChip-colorError');
    expect(within(videoRow).getByText('Video')).toBeInTheDocument();
    // a user's page has no owner column
    expect(screen.queryByRole('columnheader', { name: 'User' })).not.toBeInTheDocument();
    const list = taskRequests(seen)[0];
    expect(list.pathname).toBe('/api/task/self');
    expect(list.search).toBe('?p=0');

    fireEvent.click(within(videoRow).getByRole('button', { name: 'Open task details' }));
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(drawer).getByTestId('task-error')).toHaveTextContent('The prompt was refused by the moderation system.');
    expect(within(drawer).getByText('moderation_blocked')).toBeInTheDocument();
    expect(within(drawer).getByText('req_task_video_1')).toBeInTheDocument();
    expect(within(drawer).getByRole('button', { name: 'Copy request ID' })).toBeInTheDocument();
    fireEvent.click(within(drawer).getByRole('button', { name: 'Close' }));
  });

  it("sends an admin's filters (kind, status, user) to /api/task/ and shows each task's owner", async () => {
    screenWidth(1440);
    const admin = { role: 10, rows: [{ ...failedVideo, username: 'bob', channel_id: 4 }] };
    const seen = renderTasks(admin, filterSearch({ kind: 'video', status: 'failed', user_id: 2 }));
    const row = (await screen.findByText(failedVideo.id)).closest('tr') as HTMLElement;
    expect(screen.getByRole('heading', { name: 'Tasks' })).toBeInTheDocument();
    expect(within(row).getByRole('link', { name: 'bob' })).toHaveAttribute('href', '/user/edit/2');
    const list = taskRequests(seen)[0];
    expect(list.pathname).toBe('/api/task/');
    expect(Object.fromEntries(list.searchParams)).toEqual({ p: '0', kind: 'video', status: 'failed', user_id: '2' });
    fireEvent.click(row);
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(drawer).getByText('#4')).toBeInTheDocument();
  });

  it("never sends a user's user_id filter: the server reads the caller's own", async () => {
    const seen = renderTasks({ role: 1, rows: [] }, filterSearch({ status: 'completed', user_id: 9 }));
    await expect.poll(() => taskRequests(seen).length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(taskRequests(seen)[0].search).toBe('?p=0&status=completed');
  });

  it('reads in Chinese', async () => {
    await i18nProvider.changeLocale('zh');
    try {
      renderTasks({ role: 1, rows: [runningBatch, failedVideo] });
      expect(await screen.findByText('进行中')).toBeInTheDocument();
      expect(screen.getByText('失败')).toBeInTheDocument();
      expect(screen.getByText('批处理')).toBeInTheDocument();
      expect(screen.getByRole('columnheader', { name: '已扣费' })).toBeInTheDocument();
    } finally {
      cleanup();
      await i18nProvider.changeLocale('en');
    }
  });

  it("plays a finished video in its drawer through the console's route, with a download link", async () => {
    screenWidth(1440);
    const done = { ...failedVideo, id: 'video_done1', status: 'completed', progress: 100, error: null, charged_quota: 4000 };
    renderTasks({ role: 1, rows: [done] });
    fireEvent.click(await screen.findByText('video_done1'));
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(drawer).getByTestId('task-video')).toHaveAttribute('src', '/api/task/video_done1/content');
    expect(within(drawer).getByLabelText('Video preview')).toHaveAttribute('controls');
    expect(within(drawer).getByRole('link', { name: 'Download MP4' })).toHaveAttribute('href', '/api/task/video_done1/content?download=1');
    // a finished task cannot be cancelled
    expect(within(drawer).queryByRole('button', { name: 'Cancel task' })).not.toBeInTheDocument();
  });

  it("links a batch's output and error files once written, and says so before", async () => {
    screenWidth(1440);
    const finished = { ...runningBatch, id: 'batch_done1', status: 'cancelled', output_file_id: 'file-out1', error_file_id: 'file-err1' };
    renderTasks({ role: 1, rows: [finished, { ...runningBatch, output_file_id: null, error_file_id: null }] });
    fireEvent.click(await screen.findByText('batch_done1'));
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(drawer).getByTestId('task-file-output')).toHaveAttribute('href', '/api/task/batch_done1/files/output');
    expect(within(drawer).getByTestId('task-file-output')).toHaveTextContent('Output file');
    expect(within(drawer).getByTestId('task-file-error')).toHaveAttribute('href', '/api/task/batch_done1/files/error');
    expect(within(drawer).getByText('file-err1')).toBeInTheDocument();
    fireEvent.click(within(drawer).getByRole('button', { name: 'Close' }));
    fireEvent.click(screen.getByText('batch_abc123'));
    const running = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(running).getByText('No files yet: they are written when the batch ends.')).toBeInTheDocument();
  });

  it('cancels a running batch after a confirmation, and the drawer shows its new status', async () => {
    screenWidth(1440);
    const cancels: string[] = [];
    renderTasks({ role: 1, rows: [runningBatch] });
    server.use(
      http.post('*/api/task/:id/cancel', ({ params }) => {
        cancels.push(String(params.id));
        return HttpResponse.json({ success: true, message: '', data: { ...runningBatch, status: 'cancelling', held_quota: 0 } });
      }),
    );
    fireEvent.click(await screen.findByText('batch_abc123'));
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    fireEvent.click(within(drawer).getByRole('button', { name: 'Cancel task' }));
    const confirm = await screen.findByRole('dialog', { name: 'Cancel this task?' });
    expect(confirm).toHaveTextContent('Requests not yet run are dropped');
    // keeping it running sends nothing
    fireEvent.click(within(confirm).getByRole('button', { name: 'Keep running' }));
    expect(cancels).toEqual([]);
    fireEvent.click(await within(drawer).findByRole('button', { name: 'Cancel task' }));
    fireEvent.click(within(await screen.findByRole('dialog', { name: 'Cancel this task?' })).getByRole('button', { name: 'Cancel task' }));
    await expect.poll(() => cancels).toEqual(['batch_abc123']);
    const updated = await screen.findByRole('dialog', { name: 'Task details' });
    expect(await within(updated).findByText('Cancelling')).toBeInTheDocument();
    expect(within(updated).queryByRole('button', { name: 'Cancel task' })).not.toBeInTheDocument();
  });

  it('shows cards on a phone, each opening the same drawer', async () => {
    screenWidth(390);
    renderTasks({ role: 1, rows: [runningBatch, failedVideo] });
    const cards = await screen.findAllByTestId('list-card');
    expect(cards).toHaveLength(2);
    expect(within(cards[0]).getByText('In progress')).toBeInTheDocument();
    fireEvent.click(cards[1]);
    const drawer = await screen.findByRole('dialog', { name: 'Task details' });
    expect(within(drawer).getByText('moderation_blocked')).toBeInTheDocument();
  });
});
