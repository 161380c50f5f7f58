// The Tasks page: a user's own tasks from /api/task/self (no owner column, no
// user filter sent), an admin's from /api/task/ with the owner and the
// filters (kind, status, user) on the URL; status chips in their colours, in
// English and Chinese; held and charged as money, as the log shows it; a
// row's drawer with the vendor's error and the request id; cards on a phone.
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
