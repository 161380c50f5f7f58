// The admin settings tabs against a fake API (msw): the save rules of the settings
// tabs — toggles save at once, text fields only on their section's button
// and only when changed, empty secrets skipped, invalid ratio JSON refused
// with the spec's message, a confirmation before password login goes off.
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';
import { OPTION_KEYS } from '../../common/options';
import { messages } from './messages';
import { addToList, invalidChangeMessage, pendingChanges } from '../../src/settings/saveRules';
import { server } from './setup';
import { openSettingTab, optionHandlers, personalTabHandlers } from './settingPage';

let puts: Array<{ key: string; value: string }>;

// what GET /api/pricing/defaults says of four models: two the catalog prices, one of the built-in table, one nobody prices
const DEFAULT_PRICES = [
  { model: 'claude-sonnet-4-5', model_ratio: 1.5, completion_ratio: 5, cache_read_ratio: 0.1, cache_write_ratio: 1.25 },
  { model: 'gpt-4o-mini', model_ratio: 0.075, completion_ratio: 4, cache_read_ratio: 0.5 },
  { model: 'qwen-max', model_ratio: 0.8, completion_ratio: 4 },
  { model: 'house-model', completion_ratio: 1 },
];

function serveOptions(overrides: Record<string, string> = {}, secretsSet: string[] = ['SMTPToken']) {
  puts = [];
  server.use(
    ...optionHandlers(puts, overrides, secretsSet),
    http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: {} })),
    http.get('*/api/pricing/defaults', () => HttpResponse.json({ success: true, message: '', data: DEFAULT_PRICES })),
    http.get('*/api/import/', () => HttpResponse.json({ success: true, message: '', data: { running: false, source: '', apply: false } })),
    // the Operation tab's retention panel (retention.test.tsx tests it)
    http.get('*/api/retention/', () => HttpResponse.json({ success: true, message: '', data: { kinds: [], job: null } })),
    ...personalTabHandlers(),
  );
}

const openTab = (name: 'Operation' | 'Prices' | 'System' | 'Other', role = 100) => openSettingTab(name, role);

const section = (name: RegExp | string) => screen.findByRole('region', { name });
const field = (name: string) => document.querySelector(`[name="${name}"]`) as HTMLInputElement;

// typing into several fields of a real MUI form takes a few seconds under jsdom
describe('admin settings', () => {
  beforeEach(() => serveOptions({ SystemName: 'Switchboard', SMTPServer: 'smtp.old.example' }));

  it('sends only the changed field of a section, one PUT per key', async () => {
    const user = await openTab('Other');
    const branding = await section('Name, logo and footer');
    await waitFor(() => expect(field('SystemName').value).toBe('Switchboard'));
    await user.clear(field('SystemName'));
    await user.type(field('SystemName'), 'Acme AI');
    await user.type(field('Footer'), '<b>hi</b>');
    expect(puts).toEqual([]); // held locally until saved
    await user.click(within(branding).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(puts).toEqual([
        { key: 'SystemName', value: 'Acme AI' },
        { key: 'Footer', value: '<b>hi</b>' },
      ]),
    );
    expect(await screen.findByText('settings saved')).toBeInTheDocument();
  });

  it('sends nothing when nothing changed', async () => {
    const user = await openTab('Other');
    const branding = await section('Name, logo and footer');
    await user.click(within(branding).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('nothing changed, nothing to save')).toBeInTheDocument();
    expect(puts).toEqual([]);
  });

  it('skips an empty secret and shows whether one is set', async () => {
    const user = await openTab('System');
    const smtp = await section('SMTP (outgoing e-mail)');
    expect(within(smtp).getByText('set')).toBeInTheDocument();
    expect(field('SMTPToken').value).toBe('');
    expect(field('SMTPPort').placeholder).toBe('587');
    await user.clear(field('SMTPServer'));
    await user.type(field('SMTPServer'), 'smtp.new.example');
    await user.click(within(smtp).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'SMTPServer', value: 'smtp.new.example' }]));
    await user.type(field('SMTPToken'), 'new-password');
    await user.click(within(smtp).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(puts).toEqual([
        { key: 'SMTPServer', value: 'smtp.new.example' },
        { key: 'SMTPToken', value: 'new-password' },
      ]),
    );
  });

  it("refuses invalid model ratio JSON with the spec's message and saves nothing", async () => {
    const user = await openTab('Prices');
    const ratios = await section('Prices and ratios');
    await user.click(within(ratios).getByRole('button', { name: 'Advanced: the ratio tables as JSON' }));
    await user.clear(field('ModelRatio'));
    await user.type(field('ModelRatio'), '{{"gpt-4": 15,');
    await user.click(within(ratios).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('model ratio is not a valid JSON string')).toBeInTheDocument();
    expect(puts).toEqual([]);
  });

  it('has a switch that publishes the models and prices to visitors, saved at once, and no price table', async () => {
    const user = await openTab('Operation');
    const general = await section('General');
    const publish = within(general).getByRole('switch', { name: 'Show models and prices to visitors' });
    expect(publish).not.toBeChecked();
    await user.click(publish);
    await waitFor(() => expect(puts).toEqual([{ key: 'PublicPricingEnabled', value: 'true' }]));
    // the prices have a tab of their own
    expect(screen.queryByRole('region', { name: 'Prices and ratios' })).toBeNull();
    expect(screen.queryByRole('table', { name: 'Model prices' })).toBeNull();
  });

  it('takes quota options in dollars when quota is shown in dollars, saving whole quota', async () => {
    serveOptions({ QuotaForNewUser: '250000' });
    localStorage.setItem('display_in_currency', 'true');
    localStorage.setItem('quota_per_unit', '500000');
    const user = await openTab('Operation');
    const quota = await section('Quota');
    await waitFor(() => expect(field('QuotaForNewUser').value).toBe('0.5'));
    expect(within(quota).getByText('= 250000 quota (500000 per $1)')).toBeInTheDocument();
    await user.clear(field('QuotaForNewUser'));
    await user.type(field('QuotaForNewUser'), '1.25');
    expect(field('QuotaForNewUser').value).toBe('1.25');
    expect(within(quota).getByText('= 625000 quota (500000 per $1)')).toBeInTheDocument();
    await user.click(within(quota).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'QuotaForNewUser', value: '625000' }]));
  });

  it('saves a toggle at once', async () => {
    const user = await openTab('System');
    await section('Sign-in and registration');
    await user.click(screen.getByRole('switch', { name: 'Allow new registrations' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'RegisterEnabled', value: 'false' }]));
  });

  it('asks before turning password login off', async () => {
    const user = await openTab('System');
    await section('Sign-in and registration');
    await user.click(screen.getByRole('switch', { name: 'Allow sign-in with password' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Turn off password login?')).toBeInTheDocument();
    expect(puts).toEqual([]);
    await user.click(within(dialog).getByRole('button', { name: /cancel/i }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(puts).toEqual([]);
    expect(screen.getByRole('switch', { name: 'Allow sign-in with password' })).toBeChecked();
    await user.click(screen.getByRole('switch', { name: 'Allow sign-in with password' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Turn off' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'PasswordLoginEnabled', value: 'false' }]));
  });

  it("turns a toggle back and shows the server's refusal", async () => {
    server.use(
      http.put('*/api/option/', () => HttpResponse.json({ success: false, message: 'fill in the GitHub client id and secret first' })),
    );
    const user = await openTab('System');
    await section('Sign-in and registration');
    const toggle = screen.getByRole('switch', { name: 'Allow sign-in and registration with GitHub' });
    await user.click(toggle);
    expect(await screen.findByText('fill in the GitHub client id and secret first')).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
  });

  it('adds only non-empty, new domains to the whitelist and saves the list', async () => {
    serveOptions({ EmailDomainWhitelist: 'gmail.com,qq.com' });
    const user = await openTab('System');
    const domains = await section('E-mail domain whitelist');
    const entry = field('EmailDomainWhitelist-entry');
    await user.click(within(domains).getByRole('button', { name: 'Add' }));
    await user.type(entry, 'qq.com');
    await user.click(within(domains).getByRole('button', { name: 'Add' }));
    expect(
      within(domains)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['gmail.com', 'qq.com']);
    await user.clear(entry);
    await user.type(entry, ' example.org {Enter}');
    expect(
      within(domains)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['gmail.com', 'qq.com', 'example.org']);
    await user.click(within(domains).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts).toEqual([{ key: 'EmailDomainWhitelist', value: 'gmail.com,qq.com,example.org' }]));
  });

  it("shows an admin the System tab read-only and the top-up link as root's", async () => {
    await openTab('System', 10);
    expect(await screen.findByText(/Only the super admin can change these settings/)).toBeInTheDocument();
    expect(field('SMTPServer')).toBeDisabled();
    expect(screen.getByRole('switch', { name: 'Allow new registrations' })).toBeDisabled();
    await userEvent.setup().click(screen.getByRole('tab', { name: 'Operation' }));
    await section('General');
    expect(field('TopUpLink')).toBeDisabled();
    expect(screen.getByText('Only the super admin can set the top-up link.')).toBeInTheDocument();
    expect(field('ChatLink')).not.toBeDisabled();
  });

  it('sends a test e-mail and reports where it went', async () => {
    server.use(http.post('*/api/option/test_email', () => HttpResponse.json({ success: true, message: '', data: 'root@example.test' })));
    const user = await openTab('System');
    const smtp = await section('SMTP (outgoing e-mail)');
    await user.click(within(smtp).getByRole('button', { name: 'Send test e-mail' }));
    expect(await screen.findByText('test e-mail sent to root@example.test')).toBeInTheDocument();
  });

  it('shows the release notes of the update check, sanitised', async () => {
    server.use(
      http.get('*/api/release/latest', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: {
            current_version: 'v0.5.3',
            tag_name: 'v0.6.0',
            name: 'v0.6.0',
            body: '## What is new\n\n<img src=x onerror="window.__pwned=1">',
            html_url: 'https://github.com/acme/releases/v0.6.0',
            published_at: '2024-01-02T03:04:05Z',
            update_available: true,
          },
        }),
      ),
    );
    const user = await openTab('Other');
    await user.click(await screen.findByRole('button', { name: 'Check for updates' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('New version available: v0.6.0')).toBeInTheDocument();
    expect(within(dialog).getByRole('heading', { name: 'What is new' })).toBeInTheDocument();
    expect(dialog.innerHTML).not.toContain('onerror');
    expect(within(dialog).getByRole('link', { name: 'Open the release page' })).toHaveAttribute(
      'href',
      'https://github.com/acme/releases/v0.6.0',
    );
  });

  it("shows the server's message when the update check fails", async () => {
    server.use(
      http.get('*/api/release/latest', () =>
        HttpResponse.json({ success: false, message: 'cannot check for updates: the release server is unreachable (ENOTFOUND)' }),
      ),
    );
    const user = await openTab('Other');
    await user.click(await screen.findByRole('button', { name: 'Check for updates' }));
    expect(await screen.findByText('cannot check for updates: the release server is unreachable (ENOTFOUND)')).toBeInTheDocument();
  });
});

describe('the import from one-api or new-api (Other tab)', () => {
  beforeEach(() => serveOptions());

  it("is root's only", async () => {
    await openTab('Other', 10);
    await screen.findByRole('button', { name: 'Check for updates' });
    expect(screen.queryByRole('region', { name: 'Move from one-api or new-api' })).toBeNull();
  });

  it('starts a dry run, shows its progress, then its report', async () => {
    const started: unknown[] = [];
    const states = [
      { running: true, source: '/data/one-api.db', apply: false, progress: { step: 'read', done: 0, total: 1 } },
      {
        running: false,
        source: '/data/one-api.db',
        apply: false,
        progress: { step: 'read', done: 1, total: 1 },
        report: 'Switchboard import: DRY RUN\n  users  4  4  0',
      },
    ];
    let polls = 0;
    server.use(
      http.post('*/api/import/', async ({ request }) => {
        started.push(await request.json());
        return HttpResponse.json({ success: true, message: '', data: { running: true, source: '/data/one-api.db', apply: false } });
      }),
      http.get('*/api/pricing/defaults', () => HttpResponse.json({ success: true, message: '', data: DEFAULT_PRICES })),
      http.get('*/api/import/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: started.length === 0 ? { running: false, source: '', apply: false } : states[Math.min(polls++, 1)],
        }),
      ),
    );
    const user = await openTab('Other');
    const importer = await section('Move from one-api or new-api');
    await user.type(within(importer).getByRole('textbox', { name: 'Source database' }), '/data/one-api.db');
    await user.click(within(importer).getByRole('checkbox', { name: 'Also move the logs' }));
    await user.click(within(importer).getByRole('button', { name: 'Run a dry run' }));
    expect(started).toEqual([{ source: '/data/one-api.db', apply: false, merge: false, with_logs: true }]);
    expect(await within(importer).findByText('Step read: 0 of 1', {}, { timeout: 15_000 })).toBeInTheDocument();
    const report = await within(importer).findByLabelText('Import report', {}, { timeout: 15_000 });
    expect(report.textContent).toContain('DRY RUN');
    expect(within(importer).queryByRole('status')).toBeNull();
    // ticking "Import" turns the button into the real thing
    await user.click(within(importer).getByRole('checkbox', { name: 'Import (not a dry run)' }));
    expect(within(importer).getByRole('button', { name: 'Import' })).toBeEnabled();
  });
});

describe('save rules', () => {
  it('keeps only changed values and non-empty secrets', () => {
    const saved = { SystemName: 'A', Logo: '/logo.png' };
    expect(
      pendingChanges(['SystemName', 'Logo', 'SMTPToken', 'RegisterEnabled'], saved, {
        SystemName: 'A',
        Logo: '/x.png',
        SMTPToken: '',
        RegisterEnabled: 'false',
      }),
    ).toEqual([{ key: 'Logo', value: '/x.png' }]);
    expect(pendingChanges(['SMTPToken'], {}, { SMTPToken: 's3cret' })).toEqual([{ key: 'SMTPToken', value: 's3cret' }]);
  });

  it('names the ratio whose JSON is invalid', () => {
    expect(invalidChangeMessage([{ key: 'GroupRatio', value: '[1]' }])).toBe('settings.errors.group_ratio_json');
    expect(invalidChangeMessage([{ key: 'ModelRatio', value: '{"a": 1}' }])).toBeUndefined();
    expect((messages.en as any).settings.errors.group_ratio_json).toBe('group ratio is not a valid JSON string');
  });

  it('adds only non-empty, non-duplicate list entries', () => {
    expect(addToList('a.com', ' ')).toBeUndefined();
    expect(addToList('a.com,b.com', 'b.com')).toBeUndefined();
    expect(addToList('', 'c.com')).toBe('c.com');
  });

  it('labels every option in English and Chinese', () => {
    for (const key of OPTION_KEYS) {
      expect((messages.en as any).settings.option[key], key).toBeTruthy();
      expect((messages.zh as any).settings.option[key], key).toBeTruthy();
    }
  });
});
