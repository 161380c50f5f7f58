// The webhook settings from the environment: the retry schedule tests shrink,
// the default of six attempts over about an hour, and refusals of nonsense.
import { describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_SETTINGS, loadConfig } from '../../server/config';

const base = { SESSION_SECRET: 'a-session-secret-for-config-tests', SQLITE_PATH: ':memory:' };

describe('webhook settings', () => {
  it('default to 6 attempts over about an hour, a 1 s poll, a 10 s deadline and a 30-day log', () => {
    const { webhooks } = loadConfig(base);
    expect(webhooks).toEqual(DEFAULT_WEBHOOK_SETTINGS);
    expect(webhooks!.retryDelaysMs!.length + 1).toBe(6);
    const total = webhooks!.retryDelaysMs!.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(55 * 60_000);
    expect(total).toBeLessThan(65 * 60_000);
  });

  it('reads a shrunk schedule, poll interval and deadline in (fractional) seconds', () => {
    const { webhooks } = loadConfig({
      ...base,
      WEBHOOK_RETRY_DELAYS_SECONDS: '0.05, 0.1,2',
      WEBHOOK_POLL_INTERVAL_SECONDS: '0.02',
      WEBHOOK_TIMEOUT_SECONDS: '3',
      WEBHOOK_LOG_DAYS: '0',
    });
    expect(webhooks).toEqual({ retryDelaysMs: [50, 100, 2000], pollIntervalMs: 20, timeoutMs: 3000, logDays: 0 });
  });

  it('refuses delays that are not positive numbers', () => {
    for (const value of ['0', '-1', '1,,2', 'soon'])
      expect(() => loadConfig({ ...base, WEBHOOK_RETRY_DELAYS_SECONDS: value }), value).toThrow(/WEBHOOK_RETRY_DELAYS_SECONDS/);
    expect(() => loadConfig({ ...base, WEBHOOK_TIMEOUT_SECONDS: '0' })).toThrow(/WEBHOOK_TIMEOUT_SECONDS/);
  });
});
