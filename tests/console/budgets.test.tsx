// Budgets that reset in the console: the token list shows what each key spent
// this period against its budget, the token form and the admin's user form
// load a budget and send it back (period and whole quota, an amount typed in
// dollars when quota shows in dollars), no period sends no amount, and the
// period menu offers "None" once.
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { messages } from './messages';
import { renderEdit, serveForEdit, TOKEN_RECORD, USER_RECORD, withStatus } from './fixtures/records';
import { budgetValue } from '../../src/resources/shared/BudgetField';
import { TokenEdit } from '../../src/resources/token/TokenEdit';
import { TokenList } from '../../src/resources/token/TokenList';
import { UserEdit } from '../../src/resources/user/UserForms';
import { server } from './setup';

const RESETS_AT = 1_800_000_000;
const TOKEN = {
  ...TOKEN_RECORD,
  budget_period: 'day',
  budget_quota: 2_500_000,
  budget_usage: { spent: 600_000, period_start: RESETS_AT - 86_400, resets_at: RESETS_AT },
};

describe('the token list', () => {
  it('shows the spend of this period against the budget, and None for a key without one', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    const plain = { ...TOKEN, id: 4, name: 'server', budget_period: '', budget_quota: 0, budget_usage: undefined };
    server.use(http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: [TOKEN, plain] })));
    render(
      <MemoryRouter initialEntries={['/token']}>
        {withStatus(
          <ResourceContextProvider value="token">
            <Routes>
              <Route path="/token" element={<TokenList />} />
            </Routes>
          </ResourceContextProvider>,
          true,
        )}
      </MemoryRouter>,
    );
    expect(await screen.findByRole('columnheader', { name: 'Spent this period / budget' })).toBeTruthy();
    const laptop = (await screen.findByText('laptop')).closest('tr')!;
    expect(within(laptop).getByTestId('budget').textContent).toBe('$1.20 / $5.00 a day');
    const serverRow = screen.getByText('server').closest('tr')!;
    expect(within(serverRow).getByTestId('budget').textContent).toBe('None');
  });
});

describe('the token form', () => {
  it('loads the budget with what was spent this period, and sends a new period and an amount typed in dollars as whole quota', async () => {
    const sent = serveForEdit('token', TOKEN);
    const user = userEvent.setup();
    renderEdit('token', 3, <TokenEdit />, true);
    const amount = await screen.findByRole('spinbutton', { name: /Budget per period/ });
    await waitFor(() => expect(amount).toHaveValue(5));
    expect((await screen.findByTestId('budget-spent')).textContent).toContain('Spent this period: $1.20');
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    await user.click(await screen.findByRole('option', { name: 'Per month (from the 1st)' }));
    await user.clear(amount);
    await user.type(amount, '30');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toMatchObject({ id: 3, budget_period: 'month', budget_quota: 15_000_000 });
  });

  it('says a period needs an amount, and sends nothing until it has one', async () => {
    const sent = serveForEdit('token', { ...TOKEN, budget_period: '', budget_quota: 0, budget_usage: undefined });
    const user = userEvent.setup();
    renderEdit('token', 3, <TokenEdit />);
    const amount = await screen.findByRole('spinbutton', { name: /Budget per period/ });
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    await user.click(await screen.findByRole('option', { name: 'Per week (from Monday)' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('a budget needs an amount above 0')).toBeTruthy();
    expect(sent.body).toBeUndefined();
    await user.type(amount, '1000');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toMatchObject({ budget_period: 'week', budget_quota: 1000 });
  });
});

describe('the user form (admins)', () => {
  it("loads the user's budget and sends it cleared: no period, no amount", async () => {
    const USER = {
      ...USER_RECORD,
      budget_period: 'week',
      budget_quota: 70000,
      budget_usage: { spent: 100, period_start: RESETS_AT - 7 * 86_400, resets_at: RESETS_AT },
    };
    const sent = serveForEdit('user', USER);
    server.use(http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })));
    const user = userEvent.setup();
    renderEdit('user', 5, <UserEdit />);
    const amount = await screen.findByRole('spinbutton', { name: /Budget per period/ });
    await waitFor(() => expect(amount).toHaveValue(70000));
    expect((await screen.findByTestId('budget-spent')).textContent).toContain('Spent this period: 100');
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    await user.click(await screen.findByRole('option', { name: 'None' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toMatchObject({ id: 5, budget_period: '', budget_quota: 0 });
  });
});

describe('the budget period menu', () => {
  /** The names the open period menu offers. */
  const periodOptions = async (user: ReturnType<typeof userEvent.setup>) => {
    await screen.findByRole('spinbutton', { name: /Budget per period/ });
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    return within(await screen.findByRole('listbox'))
      .getAllByRole('option')
      .map((option) => option.textContent);
  };
  const ONCE = ['None', 'Per day', 'Per week (from Monday)', 'Per month (from the 1st)'];

  it('offers None once in the token form', async () => {
    serveForEdit('token', TOKEN);
    renderEdit('token', 3, <TokenEdit />, true);
    expect(await periodOptions(userEvent.setup())).toEqual(ONCE);
  });

  it("offers None once in the user form, and a user's period loads selected", async () => {
    serveForEdit('user', { ...USER_RECORD, budget_period: 'day', budget_quota: 10 });
    server.use(http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })));
    renderEdit('user', 5, <UserEdit />);
    const user = userEvent.setup();
    expect(await periodOptions(user)).toEqual(ONCE);
    expect(screen.getByRole('option', { name: 'Per day' })).toHaveAttribute('aria-selected', 'true');
  });
});

describe('budget values and words', () => {
  it('reads the form into the wire fields', () => {
    expect(budgetValue({ budget_period: 'day', budget_quota: '1500' })).toEqual({ budget_period: 'day', budget_quota: 1500 });
    expect(budgetValue({ budget_period: '', budget_quota: 1500 })).toEqual({ budget_period: '', budget_quota: 0 });
    expect(budgetValue({})).toEqual({ budget_period: '', budget_quota: 0 });
  });

  it('has its labels in English and Chinese', () => {
    const read = (locale: 'en' | 'zh', path: string) =>
      path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], messages[locale]);
    for (const path of [
      'app.budget.period',
      'app.budget.usage_day',
      'app.budget.usage_month',
      'app.token.budget_help',
      'app.user_edit.budget_help',
      'resources.token.fields.budget',
      'settings.option.TimeZone',
    ]) {
      for (const locale of ['en', 'zh'] as const) expect(read(locale, path), `${locale} ${path}`).toEqual(expect.any(String));
    }
    expect(read('zh', 'app.budget.usage_day')).not.toBe(read('en', 'app.budget.usage_day'));
  });
});
