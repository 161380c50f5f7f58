// Money in the display currency: the log drawer explains a charge in dollars
// line by line (the ratios, the quota and its formula behind "Show ratios"),
// or in quota units when the operator shows quota; the money lines of a log
// (gifts, top-ups, an admin's quota change, one-api's imported rows) read in
// dollars; the key list shows used and remaining quota in the display unit.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { logText } from '../../src/resources/log/logContent';
import { costLines, pricePerMillion } from '../../src/resources/log/logCost';
import { LogList } from '../../src/resources/log/LogList';
import { TokenList } from '../../src/resources/token/TokenList';
import { lightTheme } from '../../src/theme';
import { TOKEN_RECORD, withStatus } from './fixtures/records';
import { server } from './setup';

/** 1,200 uncached and 400 cached input tokens, 300 output tokens, at model ratio 1.25 ($2.50 / 1M at 500000 quota a dollar). */
const charged = {
  id: 81,
  user_id: 2,
  created_at: 1700000000,
  type: 2,
  content: 'model ratio 1.25, group ratio 1.00',
  username: 'bob',
  token_name: 'laptop',
  model_name: 'gpt-4o',
  quota: 3250,
  prompt_tokens: 1600,
  completion_tokens: 300,
  channel_id: 3,
  elapsed_ms: 900,
  is_stream: false,
  details: {
    modelRatio: 1.25,
    groupRatio: 1,
    completionRatio: 4,
    cachedTokens: 400,
    cacheRatio: 0.5,
    formula: '(1200 + 400 × 0.5 + 300 × 4) × 1.25 × 1 = 3250',
  },
};
const image = {
  ...charged,
  id: 82,
  content: 'image row',
  model_name: 'dall-e-3',
  quota: 16000,
  prompt_tokens: 0,
  completion_tokens: 0,
  details: { modelRatio: 8, groupRatio: 1, formula: '⌊8 × 1 × 1 × 1000⌋ × 2 = 16000' },
};

function renderLogs(inCurrency: boolean, rows: Array<Record<string, unknown>>) {
  server.use(
    http.get('*/api/log/self/', () => HttpResponse.json({ success: true, message: '', data: rows })),
    http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [] })),
  );
  localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role: 1, status: 1 }));
  // no status provider here: the unit is read from the status cached at sign-in
  localStorage.setItem('display_in_currency', String(inCurrency));
  localStorage.setItem('quota_per_unit', '500000');
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

async function openDrawer(content: string, title = 'Log details') {
  fireEvent.click(await screen.findByText(content));
  return screen.findByRole('dialog', { name: title });
}

afterEach(() => {
  cleanup();
  localStorage.clear();
});

describe('the log drawer explains a charge', () => {
  it('in dollars, line by line, with the ratios and the quota behind "Show ratios"', async () => {
    renderLogs(true, [charged]);
    const drawer = await openDrawer('model ratio 1.25, group ratio 1.00');
    expect(within(drawer).getByText('Cost').nextElementSibling).toHaveTextContent('$0.006500');
    expect(within(drawer).getByText('How was this computed?')).toBeInTheDocument();
    const lines = within(within(drawer).getByTestId('log-cost'))
      .getAllByRole('listitem')
      .map((line) => line.textContent);
    expect(lines).toEqual([
      '1,200 input tokens × $2.50 / 1M = $0.0030',
      '400 cached input tokens × $1.25 / 1M = $0.00050',
      '300 output tokens × $10.00 / 1M = $0.0030',
      'Total charged: $0.0065',
    ]);
    // the ratios and the quota units are not the explanation: they wait behind the toggle
    expect(within(drawer).queryByText('Model ratio')).toBeNull();
    expect(within(drawer).queryByText('3250 quota')).toBeNull();
    expect(within(drawer).queryByTestId('log-formula')).toBeNull();
    const toggle = within(drawer).getByRole('button', { name: 'Show ratios' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    fireEvent.click(toggle);
    expect(within(drawer).getByRole('button', { name: 'Hide ratios' })).toHaveAttribute('aria-expanded', 'true');
    expect(within(drawer).getByText('Model ratio').nextElementSibling).toHaveTextContent('1.25');
    expect(within(drawer).getByText('Completion ratio').nextElementSibling).toHaveTextContent('4');
    expect(within(drawer).getByText('Cache ratio').nextElementSibling).toHaveTextContent('0.5');
    expect(within(drawer).getByText('3250 quota')).toBeInTheDocument();
    expect(within(drawer).getByText('The same in quota units')).toBeInTheDocument();
    expect(within(drawer).getByTestId('log-formula')).toHaveTextContent('(1200 + 400 × 0.5 + 300 × 4) × 1.25 × 1 = 3250');
    fireEvent.click(within(drawer).getByRole('button', { name: 'Hide ratios' }));
    expect(within(drawer).queryByTestId('log-formula')).toBeNull();
  });

  it('in quota units when the operator shows quota: the ratios and the formula are the explanation, no dollars', async () => {
    renderLogs(false, [charged]);
    const drawer = await openDrawer('model ratio 1.25, group ratio 1.00');
    expect(within(drawer).getByText('Model ratio').nextElementSibling).toHaveTextContent('1.25');
    expect(within(drawer).getByText('Quota').nextElementSibling).toHaveTextContent('3250');
    expect(within(drawer).getByText('How was this computed?')).toBeInTheDocument();
    expect(within(drawer).getByTestId('log-formula')).toHaveTextContent('= 3250');
    expect(within(drawer).queryByTestId('log-cost')).toBeNull();
    expect(within(drawer).queryByRole('button', { name: 'Show ratios' })).toBeNull();
    expect(drawer.textContent).not.toContain('$');
  });

  it('a charge that is not of tokens (images) shows its cost in dollars and its formula behind the toggle', async () => {
    renderLogs(true, [image]);
    const drawer = await openDrawer('image row');
    expect(within(drawer).getByText('Cost').nextElementSibling).toHaveTextContent('$0.032000');
    expect(within(drawer).queryByTestId('log-cost')).toBeNull();
    expect(within(drawer).queryByText('How was this computed?')).toBeNull();
    fireEvent.click(within(drawer).getByRole('button', { name: 'Show ratios' }));
    expect(within(drawer).getByText('How was this computed?')).toBeInTheDocument();
    expect(within(drawer).getByTestId('log-formula')).toHaveTextContent('⌊8 × 1 × 1 × 1000⌋ × 2 = 16000');
    expect(within(drawer).getByText('16000 quota')).toBeInTheDocument();
  });

  it('says the lines in Chinese', async () => {
    await i18nProvider.changeLocale('zh');
    try {
      renderLogs(true, [charged]);
      const drawer = await openDrawer('模型倍率 1.25，分组倍率 1.00', '日志详情');
      expect(within(within(drawer).getByTestId('log-cost')).getByText('1,200 个输入 Token × $2.50 / 1M = $0.0030')).toBeInTheDocument();
      expect(within(drawer).getByText('实际扣费：$0.0065')).toBeInTheDocument();
      expect(within(drawer).getByRole('button', { name: '显示倍率' })).toBeInTheDocument();
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});

describe('the lines of a charge', () => {
  it('are the terms of computeQuota at the row ratios, and none when a ratio it used is missing', () => {
    expect(costLines(charged, charged.details)).toEqual([
      { kind: 'input', tokens: 1200, perToken: 1.25, quota: 1500 },
      { kind: 'cached', tokens: 400, perToken: 0.625, quota: 250 },
      { kind: 'output', tokens: 300, perToken: 5, quota: 1500 },
    ]);
    // the group ratio scales every price
    expect(
      costLines({ ...charged, prompt_tokens: 100, completion_tokens: 0 }, { ...charged.details, cachedTokens: 0, groupRatio: 2 }),
    ).toEqual([{ kind: 'input', tokens: 100, perToken: 2.5, quota: 250 }]);
    expect(costLines(image, image.details)).toBeUndefined();
    expect(costLines(charged, { ...charged.details, cacheRatio: undefined })).toBeUndefined();
    expect(costLines(charged, { ...charged.details, cacheWriteTokens: 100 })).toBeUndefined();
    expect(costLines({ ...charged, id: 1 }, {})).toBeUndefined();
  });

  it('prices a million tokens in dollars with 2 to 6 decimals', () => {
    expect(pricePerMillion(1.25, 500000)).toBe('$2.50');
    expect(pricePerMillion(0.0375, 500000)).toBe('$0.075');
    expect(pricePerMillion(1.5625, 500000)).toBe('$3.125');
    expect(pricePerMillion(15, 500000)).toBe('$30.00');
    expect(pricePerMillion(1, 1000000)).toBe('$1.00');
  });
});

describe('the money lines of a log', () => {
  const english = (key: string, options?: Record<string, unknown>) => i18nProvider.translate(key, options);
  const dollars = { quota_per_unit: 500000, display_in_currency: true };
  const quota = { quota_per_unit: 500000, display_in_currency: false };
  // exactly as the server writes them (tests/server/moneyLogs.test.ts)
  const written = [
    'new-user gift: 2500 quota',
    'gift for using an invite code: 300 quota',
    'gift for inviting invitee: 700 quota',
    'top-up with a redemption code: 500000 quota',
    'root changed the quota from 502800 to 5000000',
  ];

  it('reads every amount in dollars when quota shows in dollars', () => {
    expect(written.map((text) => logText(text, dollars, english))).toEqual([
      'new-user gift: $0.005 (2500 quota)',
      'gift for using an invite code: $0.0006 (300 quota)',
      'gift for inviting invitee: $0.0014 (700 quota)',
      'top-up with a redemption code: $1.00 (500000 quota)',
      'root changed the quota from $1.0056 (502800 quota) to $10.00 (5000000 quota)',
    ]);
    expect(logText('root changed the quota from 100 to -500000', dollars, english)).toBe(
      'root changed the quota from $0.0002 (100 quota) to -$1.00 (-500000 quota)',
    );
  });

  it('keeps them as written in quota units when the operator shows quota', () => {
    for (const text of written) expect(logText(text, quota, english)).toBe(text);
  });

  it('reads an admin change in Chinese in dollars', async () => {
    await i18nProvider.changeLocale('zh');
    try {
      const chinese = (key: string, options?: Record<string, unknown>) => i18nProvider.translate(key, options);
      expect(logText('root changed the quota from 0 to 5000000', dollars, chinese)).toBe(
        'root 将额度从 $0.00 (0 额度) 改为 $10.00 (5000000 额度)',
      );
      expect(logText('root changed the quota from 0 to 5000000', quota, chinese)).toBe('root 将额度从 0 改为 5000000');
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });

  it('reads old rows imported from one-api: its quota amounts in dollars, its dollar amounts as they were', () => {
    expect(logText('通过兑换码充值 500000 点额度', dollars, english)).toBe('通过兑换码充值 $1.00 (500000 点额度)');
    expect(logText('管理员将用户额度从 0 点额度修改为 250000 点额度', dollars, english)).toBe(
      '管理员将用户额度从 $0.00 (0 点额度)修改为 $0.50 (250000 点额度)',
    );
    expect(logText('通过兑换码充值 500000 点额度', quota, english)).toBe('通过兑换码充值 500000 点额度');
    expect(logText('通过兑换码充值 ＄1.000000 额度', dollars, english)).toBe('通过兑换码充值 ＄1.000000 额度');
  });
});

describe('the key list', () => {
  const tokens = [
    { ...TOKEN_RECORD, id: 3, name: 'laptop', used_quota: 250000, remain_quota: 625000 },
    { ...TOKEN_RECORD, id: 4, name: 'server', used_quota: 1500, remain_quota: 0, unlimited_quota: true },
    { ...TOKEN_RECORD, id: 5, name: 'overrun', used_quota: 0, remain_quota: -50000 },
  ];
  const renderKeys = (inCurrency: boolean) => {
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    server.use(http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: tokens })));
    render(
      <MemoryRouter initialEntries={['/token']}>
        {withStatus(
          <ResourceContextProvider value="token">
            <Routes>
              <Route path="/token" element={<TokenList />} />
            </Routes>
          </ResourceContextProvider>,
          inCurrency,
        )}
      </MemoryRouter>,
    );
  };
  /** The used and the remaining cells of a key's row. */
  const amounts = async (name: string) => {
    const row = (await screen.findByText(name)).closest('tr')!;
    const headers = screen.getAllByRole('columnheader').map((header) => header.textContent);
    const cells = within(row).getAllByRole('cell');
    return [cells[headers.indexOf('Used quota')].textContent, cells[headers.indexOf('Remaining quota')].textContent];
  };

  it('shows used and remaining quota in dollars', async () => {
    renderKeys(true);
    await screen.findByRole('columnheader', { name: 'Used quota' });
    expect(await amounts('laptop')).toEqual(['$0.50', '$1.25']);
    expect(await amounts('server')).toEqual(['$0.0030', 'Unlimited']);
    expect(await amounts('overrun')).toEqual(['$0.00', 'owed $0.10']);
  });

  it('shows them in quota units when the operator shows quota', async () => {
    renderKeys(false);
    await screen.findByRole('columnheader', { name: 'Used quota' });
    expect(await amounts('laptop')).toEqual(['250.0k', '625.0k']);
    expect(await amounts('server')).toEqual(['1500', 'Unlimited']);
    expect(await amounts('overrun')).toEqual(['0', 'owed 50.0k']);
  });
});
