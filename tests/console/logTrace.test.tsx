// A traced call's log drawer: the trace id, linked through the operator's
// TraceLinkTemplate for an admin, shown alone for a user (who never reads the
// options), in English and Chinese.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { LogList } from '../../src/resources/log/LogList';
import { lightTheme } from '../../src/theme';
import { server } from './setup';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

const traced = {
  id: 71,
  user_id: 2,
  created_at: 1700000000,
  type: 2,
  content: 'traced call',
  username: 'bob',
  token_name: 'laptop',
  model_name: 'gpt-4',
  quota: 1500,
  prompt_tokens: 12,
  completion_tokens: 30,
  channel_id: 3,
  channel_name: 'azure-east',
  elapsed_ms: 1234,
  is_stream: false,
  request_id: 'req_traced_71',
  details: { protocol: 'openai', operation: 'chat', status: 200, traceId: TRACE_ID },
};

/** Serves the log list (admin's or user's) and its pickers; records every request's path. */
function serve(admin: boolean): string[] {
  const list = admin ? '*/api/log/' : '*/api/log/self/';
  server.use(
    http.get(list, () => HttpResponse.json({ success: true, message: '', data: [traced] })),
    http.get(`${list}stat`, () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [] })),
    http.get('*/api/option/', () =>
      HttpResponse.json({
        success: true,
        message: '',
        data: [{ key: 'TraceLinkTemplate', value: 'https://jaeger.example/trace/{trace_id}' }],
      }),
    ),
  );
  const paths: string[] = [];
  server.events.on('request:start', ({ request }) => {
    paths.push(new URL(request.url).pathname);
  });
  return paths;
}

function renderLogs(role: number) {
  localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role, status: 1 }));
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  render(
    <MemoryRouter initialEntries={['/log']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="log">
          <Routes>
            <Route path="/log" element={<LogList />} />
          </Routes>
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('the log drawer of a traced call', () => {
  afterEach(async () => {
    cleanup();
    server.events.removeAllListeners();
    localStorage.clear();
    await i18nProvider.changeLocale('en');
  });

  it('links the trace id through TraceLinkTemplate for an admin, in English and Chinese', async () => {
    serve(true);
    renderLogs(10);
    fireEvent.click(await screen.findByText('traced call'));
    const drawer = await screen.findByRole('dialog', { name: 'Log details' });
    expect(within(drawer).getByText('Trace ID')).toBeInTheDocument();
    const link = await within(drawer).findByRole('link', { name: 'Open the trace' });
    expect(link).toHaveAttribute('href', `https://jaeger.example/trace/${TRACE_ID}`);
    expect(link).toHaveTextContent(TRACE_ID);
    cleanup();
    await i18nProvider.changeLocale('zh');
    renderLogs(10);
    fireEvent.click(await screen.findByText('traced call'));
    const zhDrawer = await screen.findByRole('dialog');
    expect(within(zhDrawer).getByText('追踪 ID')).toBeInTheDocument();
    expect(await within(zhDrawer).findByRole('link', { name: '打开链路追踪' })).toHaveAttribute(
      'href',
      `https://jaeger.example/trace/${TRACE_ID}`,
    );
  });

  it("shows a user the trace id alone, without reading the operator's options", async () => {
    const paths = serve(false);
    renderLogs(1);
    fireEvent.click(await screen.findByText('traced call'));
    const drawer = await screen.findByRole('dialog', { name: 'Log details' });
    expect(within(drawer).getByText(TRACE_ID)).toBeInTheDocument();
    expect(within(drawer).queryByRole('link', { name: 'Open the trace' })).toBeNull();
    expect(paths).not.toContain('/api/option/');
  });
});
