// A key's status as the list shows it: the server marks a key expired or
// exhausted only when it is next used, so the console reads the dates and the
// balance itself (an expired key read "Enabled" for as long as nobody used it).
import { render, screen } from '@testing-library/react';
import { AdminContext, memoryStore, RecordContextProvider } from 'react-admin';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { StatusChip } from '../../src/resources/shared/StatusChip';
import { effectiveTokenStatus } from '../../src/resources/token/TokenList';

const NOW = 1_800_000_000;
const token = (fields: Partial<{ status: number; expired_time: number; remain_quota: number; unlimited_quota: boolean }>) => ({
  status: 1,
  expired_time: -1,
  remain_quota: 1000,
  unlimited_quota: false,
  ...fields,
});

describe('effectiveTokenStatus', () => {
  it('keeps an enabled key with time and quota left enabled', () => {
    expect(effectiveTokenStatus(token({}), NOW)).toBe(1);
    expect(effectiveTokenStatus(token({ expired_time: NOW + 60 }), NOW)).toBe(1);
    expect(effectiveTokenStatus(token({ remain_quota: 0, unlimited_quota: true }), NOW)).toBe(1);
  });

  it('reads an enabled key past its expiry as expired, from the second it expires', () => {
    expect(effectiveTokenStatus(token({ expired_time: NOW - 20 * 60 }), NOW)).toBe(3);
    expect(effectiveTokenStatus(token({ expired_time: NOW }), NOW)).toBe(3);
  });

  it('reads an enabled, limited key with nothing left (or owing) as exhausted', () => {
    expect(effectiveTokenStatus(token({ remain_quota: 0 }), NOW)).toBe(4);
    expect(effectiveTokenStatus(token({ remain_quota: -500 }), NOW)).toBe(4);
  });

  it('leaves a status the server set alone', () => {
    expect(effectiveTokenStatus(token({ status: 2, expired_time: NOW - 1 }), NOW)).toBe(2);
    expect(effectiveTokenStatus(token({ status: 3 }), NOW)).toBe(3);
  });
});

describe('the token status chip', () => {
  it('shows a key that expired twenty minutes ago as Expired, not Enabled', async () => {
    const expired = { id: 1, ...token({ expired_time: Math.floor(Date.now() / 1000) - 20 * 60 }) };
    render(
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <RecordContextProvider value={expired}>
          <StatusChip
            source="status"
            labels={{ 1: ['status.token.enabled', 'success'], 3: ['status.token.expired', 'warning'] }}
            statusOf={(record) => effectiveTokenStatus(record as never, Math.floor(Date.now() / 1000))}
          />
        </RecordContextProvider>
      </AdminContext>,
    );
    expect(await screen.findByText('Expired')).toBeTruthy();
    expect(screen.queryByText('Enabled')).toBeNull();
  });
});
