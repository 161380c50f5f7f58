// Rate limits in the console: the token list shows what limits each key in
// effect, the token form sends a key's own limits (empty = the account's,
// null on the wire), and the GroupRateLimits setting is checked before it is
// sent, in both languages.
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, RecordContextProvider } from 'react-admin';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { messages } from './messages';
import { server } from './setup';
import { renderEdit, serveForEdit, TOKEN_RECORD, USER_RECORD } from './fixtures/records';
import { RateLimitsField, rateLimitValue } from '../../src/resources/shared/RateLimitsField';
import { TokenEdit } from '../../src/resources/token/TokenEdit';
import { UserEdit } from '../../src/resources/user/UserForms';
import { invalidChangeMessage } from '../../src/settings/saveRules';

const TOKEN = { ...TOKEN_RECORD, tpm_limit: 50000, rate_limits: { rpm: 600, tpm: 50000 } };

const renderField = (record: Record<string, unknown>) =>
  render(
    <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
      <RecordContextProvider value={record}>
        <RateLimitsField />
      </RecordContextProvider>
    </AdminContext>,
  );

describe('the limits column of the token list', () => {
  it('shows the limits in effect, compactly, or Unlimited', async () => {
    const { unmount } = renderField({ id: 1, rate_limits: { rpm: 600, tpm: 100000 } });
    expect(await screen.findByText('600 RPM · 100K TPM')).toBeTruthy();
    unmount();
    const second = renderField({ id: 2, rate_limits: { rpm: 0, tpm: 1500000 } });
    expect(await screen.findByText('1.5M TPM')).toBeTruthy();
    second.unmount();
    renderField({ id: 3, rate_limits: { rpm: 0, tpm: 0 } });
    expect(await screen.findByText('Unlimited')).toBeTruthy();
  });
});

describe('the token form', () => {
  it("loads the key's own limits and sends them back, an emptied field as null (the account's limit)", async () => {
    const sent = serveForEdit('token', TOKEN);
    const user = userEvent.setup();
    renderEdit('token', 3, <TokenEdit />);
    const rpm = await screen.findByRole('spinbutton', { name: /Requests per minute/ });
    const tpm = screen.getByRole('spinbutton', { name: /Tokens per minute/ });
    await waitFor(() => expect(tpm).toHaveValue(50000));
    expect(rpm).toHaveValue(null);
    await user.type(rpm, '120');
    await user.clear(tpm);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toMatchObject({ id: 3, rpm_limit: 120, tpm_limit: null });
  });

  it('reads a field into the wire value', () => {
    expect(rateLimitValue('')).toBeNull();
    expect(rateLimitValue(null)).toBeNull();
    expect(rateLimitValue(undefined)).toBeNull();
    expect(rateLimitValue(0)).toBe(0);
    expect(rateLimitValue('600')).toBe(600);
  });
});

/** The user the edit form loads. */
const USER = { ...USER_RECORD, group: 'vip', rpm_limit: 100, tpm_limit: 20000 };

/** The edit form's calls: the user, the groups that exist, and the save, whose body the returned function gives. */
function serveUserEdit(): () => Record<string, unknown> | undefined {
  let sent: Record<string, unknown> | undefined;
  server.use(
    http.get('*/api/user/5', () => HttpResponse.json({ success: true, message: '', data: USER })),
    http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default', 'svip', 'vip'] })),
    http.put('*/api/user/', async ({ request }) => {
      sent = (await request.json()) as Record<string, unknown>;
      return HttpResponse.json({ success: true, message: '', data: null });
    }),
  );
  return () => sent;
}

describe('the user form (admins)', () => {
  it("loads the user's overrides and sends them, an emptied one as null (the group's limit)", async () => {
    const sent = serveUserEdit();
    const user = userEvent.setup();
    renderEdit('user', 5, <UserEdit />);
    const rpm = await screen.findByRole('spinbutton', { name: /Requests per minute/ });
    const tpm = screen.getByRole('spinbutton', { name: /Tokens per minute/ });
    await waitFor(() => expect(rpm).toHaveValue(100));
    expect(tpm).toHaveValue(20000);
    await user.clear(rpm);
    await user.type(rpm, '0');
    await user.clear(tpm);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent()).toBeDefined(), { timeout: 15_000 });
    expect(sent()).toMatchObject({ id: 5, rpm_limit: 0, tpm_limit: null });
  });

  it('offers the groups that exist for the group, and takes a new one typed in', async () => {
    const sent = serveUserEdit();
    const user = userEvent.setup();
    renderEdit('user', 5, <UserEdit />);
    const group = await screen.findByRole('combobox', { name: 'Group' });
    await waitFor(() => expect(group).toHaveValue('vip'));
    await user.clear(group);
    await user.click(group);
    expect((await screen.findAllByRole('option')).map((option) => option.textContent)).toEqual(['default', 'svip', 'vip']);
    await user.click(screen.getByRole('option', { name: 'svip' }));
    expect(group).toHaveValue('svip');
    await user.clear(group);
    await user.type(group, 'team-a');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent()).toBeDefined(), { timeout: 15_000 });
    expect(sent()).toMatchObject({ id: 5, group: 'team-a' });
  });
});

describe('the GroupRateLimits setting', () => {
  it('stops an invalid table before sending, with its own message, and lets a valid one through', () => {
    expect(invalidChangeMessage([{ key: 'GroupRateLimits', value: '{"vip": 5}' }])).toBe('settings.errors.group_rate_limits_json');
    expect(invalidChangeMessage([{ key: 'GroupRateLimits', value: '{"vip": {"rpm": -1}}' }])).toBe(
      'settings.errors.group_rate_limits_json',
    );
    expect(
      invalidChangeMessage([{ key: 'GroupRateLimits', value: '{"default": {"rpm": 0, "tpm": 0}, "vip": {"rpm": 600, "tpm": 100000}}' }]),
    ).toBeUndefined();
    // the ratio tables keep their own rule: a rate-limit shaped value is no ratio table
    expect(invalidChangeMessage([{ key: 'GroupRatio', value: '{"vip": {"rpm": 1}}' }])).toBe('settings.errors.group_ratio_json');
  });

  it('has its labels and messages in English and Chinese', () => {
    const read = (locale: 'en' | 'zh', path: string) =>
      path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], messages[locale]);
    expect(read('en', 'settings.option.GroupRateLimits')).toBe('Rate limits per group (RPM, TPM)');
    expect(read('zh', 'settings.option.GroupRateLimits')).toBe('分组速率限制（RPM、TPM）');
    for (const path of [
      'settings.help.GroupRateLimits',
      'settings.errors.group_rate_limits_json',
      'app.token.rpm_limit',
      'app.token.tpm_limit',
      'app.token.rate_limit_help',
      'app.user_edit.rpm_limit',
      'app.user_edit.rate_limit_help',
      'app.rate_limits.rpm',
      'resources.token.fields.rate_limits',
    ]) {
      for (const locale of ['en', 'zh'] as const) expect(read(locale, path), `${locale} ${path}`).toEqual(expect.any(String));
    }
    expect(read('zh', 'app.token.rpm_limit')).not.toBe(read('en', 'app.token.rpm_limit'));
  });
});
