// A balance below zero is money owed (a provider overran a request's limit and
// the excess was charged in full): the console says so, in red, in both languages.
import { render, screen } from '@testing-library/react';
import { AdminContext, memoryStore } from 'react-admin';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { Balance } from '../../src/resources/shared/QuotaField';

function renderBalance(quota: number) {
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  render(
    <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
      <Balance quota={quota} />
    </AdminContext>,
  );
}

describe('Balance', () => {
  it('shows a positive balance as an amount', async () => {
    renderBalance(250_000);
    expect(await screen.findByText('$0.50')).toBeTruthy();
    expect(screen.queryByTestId('quota-owed')).toBeNull();
  });

  it('shows a negative balance as owed', async () => {
    renderBalance(-1_000_000);
    const owed = await screen.findByTestId('quota-owed');
    expect(owed.textContent).toBe('owed $2.00');
  });
});
