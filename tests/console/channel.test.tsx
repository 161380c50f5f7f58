// The channel screens: list cells (type, status, response time, balance per
// type), row actions that call the data provider's channel methods, the
// form's validation rules and wire clean-up, and a multi-key channel's key
// list (masked keys, each with its own test, enable/disable and delete).
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, Notification, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES } from '../../common/channelTypes';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { appEnglish } from '../../src/i18n/app.en';
import { appChinese } from '../../src/i18n/app.zh';
import type { ChannelKeyRecord } from '../../common/records';
import { ChannelCreate } from '../../src/resources/channel/ChannelCreate';
import { ChannelEdit } from '../../src/resources/channel/ChannelEdit';
import { formatBalance, responseTimeColor } from '../../src/resources/channel/channelDisplay';
import { channelFormValues, channelTransform, validateChannelForm } from '../../src/resources/channel/ChannelInputs';
import { ChannelList } from '../../src/resources/channel/ChannelList';
import { lightTheme } from '../../src/theme';
import { server } from './setup';

const channel = (fields: Record<string, unknown>) => ({
  id: 1,
  type: 1,
  name: 'main',
  key: '',
  status: 1,
  base_url: '',
  other: '',
  models: 'gpt-4',
  group: 'default',
  model_mapping: '{}',
  priority: 0,
  weight: 1,
  response_time: 0,
  test_time: 0,
  balance: 0,
  balance_updated_time: 0,
  used_quota: 0,
  created_time: 0,
  auto_disabled: false,
  ...fields,
});

function renderAt(path: string) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="channel">
          <Routes>
            <Route path="/channel" element={<ChannelList />} />
            <Route path="/channel/add" element={<ChannelCreate />} />
            <Route path="/channel/edit/:id" element={<ChannelEdit />} />
          </Routes>
        </ResourceContextProvider>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('the channel-type table', () => {
  it("has the spec's 18 types and today's providers once each, and every `other` label is a translated key", () => {
    const today = [
      19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
      52, 53,
    ];
    expect(CHANNEL_TYPES.map((type) => type.value).sort((a, b) => a - b)).toEqual([
      ...Array.from({ length: 18 }, (_, index) => index + 1),
      ...today,
    ]);
    const labels = CHANNEL_TYPES.flatMap((type) => (type.other ? [type.other.label] : []));
    expect(labels).toEqual([
      'app.channel.other_azure',
      'app.channel.other_spark',
      'app.channel.other_zhipu',
      'app.channel.other_cloudflare',
      'app.channel.other_vertex',
      'app.channel.other_library',
      'app.channel.other_bedrock',
    ]);
    for (const label of [...labels, 'app.channel.other_required', 'app.channel.other_required_help']) {
      for (const locale of [appEnglish, appChinese]) {
        const found = label.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], locale);
        expect(typeof found).toBe('string');
      }
    }
  });

  it('requires a base URL exactly for Azure, Custom, FastGPT, Proxy and the generic OpenAI-compatible type', () => {
    expect(CHANNEL_TYPES.filter((type) => type.baseUrlRequired).map((type) => type.value)).toEqual([3, 8, 22, 43, 50]);
  });

  it('gives every type without a required base URL a default one, and Zhipu v4 as its empty `other`', () => {
    for (const type of CHANNEL_TYPES) {
      // Spark's host goes by its version, Vertex AI's and Bedrock's by their region
      if (!type.baseUrlRequired && type.protocol !== 'xunfei' && type.protocol !== 'vertex' && type.protocol !== 'bedrock')
        expect(type.defaultBaseUrl, type.label).toMatch(/^https?:\/\//);
    }
    expect(CHANNEL_TYPES.find((type) => type.value === 16)?.other?.fallback).toBe('v4');
    expect(channelTransform({ type: 16, name: 'glm', key: 'k', other: '', models: ['glm-4-plus'], groups: [] })).toMatchObject({
      other: 'v4',
    });
    expect(channelTransform({ type: 16, name: 'glm', key: 'k', other: 'v3', models: ['glm-4-plus'], groups: [] })).toMatchObject({
      other: 'v3',
    });
  });

  it("asks for Cloudflare's account id unless the base URL holds it", () => {
    const form = {
      name: 'cf',
      key: 'token',
      type: 37,
      models: ['@cf/meta/llama-3.1-8b-instruct'],
      model_mapping: '',
      priority: 0,
      weight: 1,
      base_url: '',
      other: '',
    };
    expect(validateChannelForm(true)(form)).toEqual({ other: 'app.channel.other_required' });
    expect(validateChannelForm(true)({ ...form, other: 'account-id' })).toEqual({});
    expect(validateChannelForm(true)({ ...form, base_url: 'https://api.cloudflare.com/client/v4/accounts/account-id/ai' })).toEqual({});
  });
});

describe('channel display rules', () => {
  it('colours response times by the spec thresholds', () => {
    expect([0, 1, 1000, 1001, 3000, 3001, 5000, 5001].map(responseTimeColor)).toEqual([
      'grey',
      'green',
      'green',
      'olive',
      'olive',
      'yellow',
      'yellow',
      'red',
    ]);
  });

  it("shows balances in each type's unit", () => {
    expect(formatBalance(1, 12.345)).toBe('$12.35');
    expect(formatBalance(8, 0)).toBe('$0.00');
    expect(formatBalance(4, 3)).toBe('¥3.00');
    expect(formatBalance(12, 3)).toBe('¥3.00');
    expect(formatBalance(5, 25000)).toBe('¥2.50');
    expect(formatBalance(10, 25000)).toBe('25.0k');
    expect(formatBalance(13, 42)).toBe('42');
    // today's vendors: DeepSeek, Moonshot and SiliconFlow in yuan, OpenRouter in dollars
    expect(formatBalance(36, 110)).toBe('¥110.00');
    expect(formatBalance(25, 49.58894)).toBe('¥49.59');
    expect(formatBalance(44, 88.88)).toBe('¥88.88');
    expect(formatBalance(20, 74.75)).toBe('$74.75');
    expect(formatBalance(3, 5)).toBeNull();
    expect(formatBalance(14, 5)).toBeNull();
  });
});

describe('channel form rules', () => {
  it('asks for name and key on create, but not for the key on edit', () => {
    const base = { type: 1, models: ['gpt-4'], model_mapping: '', priority: 0, weight: 1 };
    expect(validateChannelForm(true)({ ...base, name: '', key: '' })).toEqual({
      name: 'app.channel.name_key_required',
      key: 'app.channel.name_key_required',
    });
    expect(validateChannelForm(false)({ ...base, name: 'x', key: '' })).toEqual({});
  });

  it('asks for the key again on an edit that changes the base URL or the type', () => {
    const original = { type: 8, base_url: 'https://old.example' };
    const edit = {
      type: 8,
      name: 'x',
      key: '',
      models: ['a'],
      model_mapping: '',
      base_url: 'https://old.example/',
      priority: 0,
      weight: 1,
    };
    expect(validateChannelForm(false, original)(edit)).toEqual({});
    expect(validateChannelForm(false, original)({ ...edit, base_url: 'https://new.example' })).toEqual({
      key: 'app.channel.key_needed_after_move',
    });
    expect(validateChannelForm(false, original)({ ...edit, type: 1 })).toEqual({ key: 'app.channel.key_needed_after_move' });
    expect(validateChannelForm(false, original)({ ...edit, base_url: 'https://new.example', key: 'sk-new' })).toEqual({});
  });

  it("checks each key against its type's format (Baidu, Spark), one line per key on a batch", () => {
    const form = { name: 'x', models: ['a'], model_mapping: '', base_url: '', priority: 0, weight: 1 };
    const baiduFormat = { key: { message: 'app.channel.key_format_invalid', args: { format: 'APIKey|SecretKey' } } };
    expect(validateChannelForm(true)({ ...form, type: 15, key: 'ak|sk\nak2|sk2' })).toEqual({});
    expect(validateChannelForm(true)({ ...form, type: 15, key: 'ak|sk\nak2' })).toEqual(baiduFormat);
    expect(validateChannelForm(true)({ ...form, type: 15, key: '|sk' })).toEqual(baiduFormat);
    expect(validateChannelForm(false)({ ...form, type: 18, key: 'app|secret' })).toEqual({
      key: { message: 'app.channel.key_format_invalid', args: { format: 'APPID|APISecret|APIKey' } },
    });
    // an edit that keeps the stored key sends none, and a type without a format takes any key
    expect(validateChannelForm(false)({ ...form, type: 18, key: '' })).toEqual({});
    expect(validateChannelForm(true)({ ...form, type: 1, key: 'sk-a|b|c' })).toEqual({});
  });

  it("takes Vertex AI's service-account JSON key file as pasted over many lines, and sends it on one line", () => {
    const form = {
      name: 'vertex',
      type: 42,
      models: ['gemini-2.5-flash'],
      model_mapping: '',
      base_url: '',
      other: '',
      priority: 0,
      weight: 1,
      groups: [],
    };
    const keyFile = {
      type: 'service_account',
      project_id: 'p-1',
      private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
      client_email: 'a@p-1.iam.gserviceaccount.com',
    };
    const pasted = JSON.stringify(keyFile, null, 2);
    expect(validateChannelForm(true)({ ...form, key: pasted })).toEqual({});
    expect(channelTransform({ ...form, key: pasted })).toMatchObject({ key: JSON.stringify(keyFile), other: 'us-central1' });
    const vertexFormat = { key: { message: 'app.channel.key_format_invalid', args: { format: 'service account JSON key file' } } };
    expect(validateChannelForm(true)({ ...form, key: 'AIzaSy-an-api-key' })).toEqual(vertexFormat);
    expect(validateChannelForm(true)({ ...form, key: JSON.stringify({ ...keyFile, type: 'authorized_user' }) })).toEqual(vertexFormat);
  });

  it('needs a model, a JSON object mapping and a base URL for Azure and Custom', () => {
    const errors = validateChannelForm(true)({
      type: 8,
      name: 'x',
      key: 'k',
      models: [],
      model_mapping: '{"a":',
      base_url: '',
      priority: 0,
      weight: 0,
    });
    expect(errors).toEqual({
      models: 'app.channel.models_required',
      model_mapping: 'app.channel.mapping_invalid',
      base_url: 'app.channel.base_url_required',
      weight: 'app.channel.weight_invalid',
    });
    expect(
      validateChannelForm(true)({ type: 1, name: 'x', key: 'k', models: ['a'], model_mapping: '["a"]', priority: 0, weight: 1 })
        .model_mapping,
    ).toBe('app.channel.mapping_invalid');
  });

  it('cleans the values for the wire', () => {
    expect(
      channelTransform({
        type: 3,
        name: ' az ',
        key: ' k1 \n\n k2 ',
        base_url: 'https://x.openai.azure.com//',
        other: '',
        models: ['gpt-4', 'gpt-4'],
        groups: ['default', 'vip'],
        model_mapping: ' ',
        priority: '2',
        weight: '3',
      }),
    ).toEqual({
      type: 3,
      name: 'az',
      key: 'k1\nk2',
      base_url: 'https://x.openai.azure.com',
      other: '2023-06-01-preview',
      models: 'gpt-4',
      group: 'default,vip',
      model_mapping: '{}',
      test_model: '',
      priority: 2,
      weight: 3,
    });
    // a test model the list no longer holds is dropped, as the server would drop it
    expect(channelTransform({ type: 1, name: 'o', key: 'k', models: ['gpt-4', 'gpt-4o'], groups: [], test_model: 'gpt-4o' })).toMatchObject(
      { test_model: 'gpt-4o' },
    );
    expect(channelTransform({ type: 1, name: 'o', key: 'k', models: ['gpt-4'], groups: [], test_model: 'gpt-4o' })).toMatchObject({
      test_model: '',
    });
    expect(channelTransform({ id: 9, type: 18, name: 'spark', key: '', other: '', models: ['SparkDesk'], groups: [] })).toMatchObject({
      id: 9,
      other: 'v2.1',
      key: '',
      group: 'default',
    });
  });

  it('turns a stored channel into form values', () => {
    expect(channelFormValues(channel({ models: 'a,b', group: 'vip,default', model_mapping: '{"x":"y"}' }))).toMatchObject({
      key: '',
      models: ['a', 'b'],
      groups: ['vip', 'default'],
      model_mapping: '{\n  "x": "y"\n}',
    });
    expect(channelFormValues(channel({ model_mapping: '{}', group: '' }))).toMatchObject({ model_mapping: '', groups: ['default'] });
  });
});

describe('ChannelList', () => {
  it("shows each row's state and balance, tests a channel, refreshes a balance and disables one", async () => {
    const puts: unknown[] = [];
    server.use(
      http.get('*/api/channel/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            channel({ id: 3, name: 'claude', type: 14, status: 2, auto_disabled: true, group: 'vip,default' }),
            channel({ id: 4, name: 'fresh', type: 1, multi_key: true }),
            channel({
              id: 2,
              name: 'sb',
              type: 5,
              status: 2,
              balance: 25000,
              balance_updated_time: 1700000000,
              response_time: 4200,
              test_time: 1700000000,
            }),
            channel({ id: 1, name: 'main', type: 1, balance: 1.5, balance_updated_time: 1700000000 }),
          ],
        }),
      ),
      http.get('*/api/channel/test/1/', () => HttpResponse.json({ success: true, message: '', time: 0.5 })),
      http.get('*/api/channel/update_balance/1/', () => HttpResponse.json({ success: true, message: '', balance: 12.345 })),
      http.get('*/api/channel/update_balance/4/', () => HttpResponse.json({ success: true, message: '', balance: 0 })),
      http.put('*/api/channel/', async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        puts.push(body);
        return HttpResponse.json({
          success: true,
          message: '',
          data: channel({ id: 1, name: 'main', balance: 12.345, response_time: 500, ...body }),
        });
      }),
    );
    const user = userEvent.setup();
    renderAt('/channel');
    const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;

    const claude = await rowOf('claude');
    expect(within(claude).getByText('Anthropic Claude')).toBeInTheDocument();
    expect(within(claude).getByText('Auto-disabled')).toBeInTheDocument();
    expect(within(claude).getByText('Not supported')).toBeInTheDocument();
    expect(within(claude).getByText('Untested')).toBeInTheDocument();
    expect(within(claude).getByText('vip')).toBeInTheDocument();
    const sb = await rowOf('sb');
    expect(within(sb).getByText('Disabled')).toBeInTheDocument();
    expect(within(sb).getByText('4.20 s')).toBeInTheDocument();
    expect(within(sb).getByText('¥2.50')).toBeInTheDocument();
    expect(within(sb).getByRole('button', { name: 'Enable' })).toBeInTheDocument();
    // a balance never read is not an empty account
    const fresh = await rowOf('fresh');
    expect(within(fresh).getByText('Not checked')).toBeInTheDocument();
    // a multi-key channel says so beside its type; a single-key one does not
    expect(within(fresh).getByText('Multi-key')).toBeInTheDocument();
    expect(within(sb).queryByText('Multi-key')).toBeNull();
    expect(within(fresh).queryByText('$0.00')).toBeNull();

    const main = await rowOf('main');
    await user.click(within(main).getByRole('button', { name: 'Test' }));
    const tested = await screen.findByRole('dialog', { name: 'Test of main' });
    expect(await within(tested).findByText('Answered in 0.50 s')).toBeInTheDocument();
    expect(within(tested).getByText('Passed')).toBeInTheDocument();
    await user.click(within(tested).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(within(await rowOf('main')).getByText('0.50 s')).toBeInTheDocument();

    await user.click(within(await rowOf('main')).getByText('$1.50'));
    expect(await within(await rowOf('main')).findByText('$12.35')).toBeInTheDocument();

    await user.click(within(await rowOf('main')).getByRole('button', { name: 'Disable' }));
    expect(await within(await rowOf('main')).findByRole('button', { name: 'Enable' })).toBeInTheDocument();
    expect(puts).toEqual([{ id: 1, status: 2 }]);

    // once read, its 0 is an amount
    await user.click(within(await rowOf('fresh')).getByText('Not checked'));
    expect(await within(await rowOf('fresh')).findByText('$0.00')).toBeInTheDocument();
  });
});

describe("ChannelList's test with a model", () => {
  it('offers the channel models, its test model first, and tests the one picked; a slow answer is told as a failure', async () => {
    const tested: string[] = [];
    server.use(
      http.get('*/api/channel/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            channel({ id: 1, name: 'main', models: 'gpt-4,gpt-4o,o3', test_model: 'gpt-4o' }),
            channel({ id: 2, name: 'solo', models: 'gpt-4' }),
          ],
        }),
      ),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.get('*/api/channel/test/:id/', ({ request, params }) => {
        const url = new URL(request.url);
        tested.push(`${String(params.id)}${url.search}`);
        if (url.searchParams.get('model') === 'o3') {
          return HttpResponse.json({
            success: false,
            message: 'response time 12.40 s exceeds the threshold 5.00 s',
            time: 12.4,
            slow: true,
          });
        }
        return HttpResponse.json({ success: true, message: '', time: 0.25 });
      }),
    );
    const user = userEvent.setup();
    renderAt('/channel');
    const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;

    await user.click(within(await rowOf('main')).getByRole('button', { name: 'Test' }));
    const menu = await screen.findByRole('menu');
    expect(
      within(menu)
        .getAllByRole('menuitem')
        .map((item) => item.textContent),
    ).toEqual(['gpt-4odefault', 'gpt-4', 'o3', 'Test every model']);
    await user.click(within(menu).getByText('gpt-4'));
    const closeDialog = async () => {
      await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Close' }));
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    };
    const first = await screen.findByTestId('test-result-gpt-4');
    expect(await within(first).findByText('Answered in 0.25 s')).toBeInTheDocument();
    await closeDialog();

    await user.click(within(await rowOf('main')).getByRole('button', { name: 'Test' }));
    await user.click(within(await screen.findByRole('menu')).getByText('o3'));
    // a slow answer is a failure, said with its reason
    const slow = await screen.findByTestId('test-result-o3');
    expect(await within(slow).findByText('response time 12.40 s exceeds the threshold 5.00 s')).toBeInTheDocument();
    expect(within(slow).getByText('Too slow')).toBeInTheDocument();
    await closeDialog();

    // one model: nothing to pick, the test runs at once, and there is no "every model" to offer
    await user.click(within(await rowOf('solo')).getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(tested).toEqual(['1?model=gpt-4', '1?model=o3', '2']));
    expect(screen.queryByRole('menu')).toBeNull();
    expect(await within(await screen.findByTestId('test-result-gpt-4')).findByText('Answered in 0.25 s')).toBeInTheDocument();
    expect(within(screen.getByRole('dialog')).queryByRole('button', { name: 'Test every model' })).toBeNull();
  });
});

describe("ChannelList's test all", () => {
  const job = (fields: Record<string, unknown>) => ({
    id: 'j1',
    kind: 'test',
    state: 'running',
    done: 0,
    total: 3,
    failures: [],
    started_at: 1700000000,
    finished_at: 0,
    ...fields,
  });

  /** Starts a test-all answered by `first`, then by each of `polls` in turn; resolves to every text the progress showed, in order. */
  async function progressTexts(first: Record<string, unknown>, polls: Array<Record<string, unknown>>) {
    server.use(
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [channel({})] })),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.get('*/api/channel/test', () => HttpResponse.json({ success: true, message: '', data: job(first) })),
      http.get('*/api/channel/jobs/j1', () => HttpResponse.json({ success: true, message: '', data: job(polls.shift() ?? {}) })),
    );
    renderAt('/channel');
    await screen.findByText('main');
    const texts: string[] = [];
    // every frame the progress region showed, the first one included
    const observer = new MutationObserver(() => {
      const text = screen.queryByTestId('channel-job')?.textContent;
      if (text && texts.at(-1) !== text) texts.push(text);
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    await userEvent.setup().click(screen.getByRole('button', { name: 'Test all enabled' }));
    await screen.findByText(/^Test finished/, {}, { timeout: 15_000 });
    observer.disconnect();
    return texts;
  }

  it('shows 0 of N from its first frame, then the results as they come', async () => {
    const texts = await progressTexts({}, [{ done: 1 }, { state: 'done', done: 3, finished_at: 1700000005 }]);
    expect(texts).toEqual(['Testing channels: 0 of 3', 'Testing channels: 1 of 3', 'Test finished: 3 of 3 channels tested, 0 failed']);
  });

  it('says it is counting rather than "0 of 0" while the run has no total yet', async () => {
    const texts = await progressTexts({ total: 0 }, [{ state: 'done', done: 3, finished_at: 1700000005 }]);
    expect(texts).toEqual(['Testing channels: counting them…', 'Test finished: 3 of 3 channels tested, 0 failed']);
  });
});

const chosenModels = [
  'claude-sonnet-4-5',
  'claude-opus-4-1',
  'claude-haiku-4-5',
  'claude-sonnet-4-0',
  'claude-3-7-sonnet-latest',
  'claude-3-5-haiku-latest',
  'claude-x',
];

describe('ChannelCreate', () => {
  it("refuses an incomplete form, pre-fills a type's models and posts the cleaned channel", async () => {
    let posted: Record<string, unknown> | undefined;
    server.use(
      http.get('*/api/channel/models', () =>
        HttpResponse.json({ object: 'list', data: [{ id: 'gpt-3.5-turbo' }, { id: 'text-davinci-003' }, { id: 'gpt-4' }] }),
      ),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default', 'vip'] })),
      http.post('*/api/channel/', async ({ request }) => {
        posted = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '', data: { ids: [7] } });
      }),
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const user = userEvent.setup();
    // pasting is one change event; typing re-renders the whole form per key
    const fill = async (field: HTMLElement, text: string) => {
      await user.click(field);
      await user.paste(text);
    };
    renderAt('/channel/add');
    // a name alone: the key and the models are still missing
    await fill(await screen.findByRole('textbox', { name: 'Name' }), 'anthropic');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('fill in channel name and key')).toBeInTheDocument();
    expect(screen.getByText('select at least one model')).toBeInTheDocument();

    // the base-model shortcut picks gpt-3* and text-* names; clear empties the list again
    await user.click(screen.getByRole('button', { name: 'Fill base models' }));
    expect(await screen.findByRole('button', { name: 'gpt-3.5-turbo' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'text-davinci-003' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'gpt-4' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Clear models' }));
    expect(screen.queryByRole('button', { name: 'gpt-3.5-turbo' })).toBeNull();

    // choosing Claude while no model is chosen fills its usual models
    await user.click(screen.getByRole('combobox', { name: 'Type' }));
    // the select offers today's providers beside the spec's types
    expect(await screen.findByText('Google Gemini (24)')).toBeInTheDocument();
    expect(screen.getByText('OpenAI Compatible (50)')).toBeInTheDocument();
    await user.click(await screen.findByRole('option', { name: 'Anthropic Claude (14)' }));
    expect(await screen.findByRole('button', { name: 'claude-sonnet-4-5' })).toBeInTheDocument();

    await fill(screen.getByRole('textbox', { name: 'Custom model' }), 'claude-x');
    await user.keyboard('{Enter}');
    expect(await screen.findByRole('button', { name: 'claude-x' })).toBeInTheDocument();
    await fill(document.querySelector('input[name="key"]') as HTMLInputElement, 'sk-ant');
    await fill(document.querySelector('input[name="base_url"]') as HTMLInputElement, 'https://claude.example/');
    const mapping = document.querySelector('textarea[name="model_mapping"]') as HTMLTextAreaElement;
    await fill(mapping, 'nope');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('model mapping must be valid JSON')).toBeInTheDocument();
    await user.clear(mapping);
    // the test model is picked among the chosen models
    await user.click(screen.getByRole('combobox', { name: 'Test model' }));
    expect((await screen.findAllByRole('option')).map((option) => option.textContent)).toEqual(['The first model', ...chosenModels]);
    await user.click(screen.getByRole('option', { name: 'claude-x' }));
    expect(screen.getByRole('combobox', { name: 'Test model' })).toHaveTextContent('claude-x');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    expect(await screen.findByText('1 channel created', {}, { timeout: 15_000 })).toBeInTheDocument();
    expect(posted).toEqual({
      type: 14,
      name: 'anthropic',
      key: 'sk-ant',
      base_url: 'https://claude.example',
      other: '',
      models: chosenModels.join(','),
      group: 'default',
      model_mapping: '{}',
      test_model: 'claude-x',
      priority: 0,
      weight: 1,
    });
  });

  it('gives Vertex AI a many-line key field for its JSON key file, its region as `other`, and posts the key on one line', async () => {
    let posted: Record<string, unknown> | undefined;
    server.use(
      http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [] })),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.post('*/api/channel/', async ({ request }) => {
        posted = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '', data: { ids: [8] } });
      }),
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const user = userEvent.setup();
    renderAt('/channel/add');
    await user.click(await screen.findByRole('textbox', { name: 'Name' }));
    await user.paste('vertex');
    await user.click(screen.getByRole('combobox', { name: 'Type' }));
    await user.click(await screen.findByRole('option', { name: 'Google Vertex AI (42)' }));
    expect(await screen.findByRole('button', { name: 'gemini-2.5-flash' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'claude-sonnet-4-5' })).toBeInTheDocument();
    // a textarea, not a one-line password input
    expect(document.querySelector('input[name="key"]')).toBeNull();
    const keyField = document.querySelector('textarea[name="key"]') as HTMLTextAreaElement;
    expect(keyField).not.toBeNull();
    expect(screen.getByRole('textbox', { name: 'Region, or region|project (us-central1 by default; global allowed)' })).toBeInTheDocument();
    const keyFile = {
      type: 'service_account',
      project_id: 'p-1',
      private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
      client_email: 'a@p-1.iam.gserviceaccount.com',
    };
    await user.click(keyField);
    await user.paste(JSON.stringify(keyFile, null, 2));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('1 channel created', {}, { timeout: 15_000 })).toBeInTheDocument();
    expect(posted).toMatchObject({ type: 42, name: 'vertex', key: JSON.stringify(keyFile), other: 'us-central1' });
  });
});

const keyRecord = (fields: Partial<ChannelKeyRecord>): ChannelKeyRecord => ({
  id: 1,
  channel_id: 5,
  key: 'sk-****-one',
  status: 1,
  last_error: '',
  last_used_at: 0,
  used_count: 0,
  failed_count: 0,
  created_time: 1700000000,
  ...fields,
});

describe('the multi-key wire', () => {
  it('sends multi_key and the strategy only when the switch is on, so the batch wire stays one-api’s', () => {
    const base = { type: 1, name: 'pool', key: ' k1 \n k2 ', models: ['gpt-4'], groups: ['default'] };
    expect(channelTransform({ ...base, multi_key: true, key_strategy: 'round_robin' })).toMatchObject({
      key: 'k1\nk2',
      multi_key: true,
      key_strategy: 'round_robin',
    });
    expect(channelTransform({ ...base, multi_key: true })).toMatchObject({ multi_key: true, key_strategy: 'random' });
    const batch = channelTransform({ ...base, batch: true, multi_key: false, key_strategy: 'random' });
    expect(batch).not.toHaveProperty('multi_key');
    expect(batch).not.toHaveProperty('key_strategy');
  });
});

describe('ChannelEdit of a multi-key channel', () => {
  it('lists the keys masked, and tests, disables, enables, deletes and adds keys through the key routes', async () => {
    let keys = [
      keyRecord({ id: 1, key: 'sk-****-one', used_count: 12, failed_count: 1, last_used_at: 1700000000 }),
      keyRecord({ id: 2, key: 'sk-****-two', status: 3, last_error: 'Incorrect API key provided' }),
    ];
    const calls: string[] = [];
    server.use(
      http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [{ id: 'gpt-4' }] })),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.get('*/api/channel/5', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: channel({ id: 5, name: 'pool', test_error: '', multi_key: true, key_strategy: 'round_robin' }),
        }),
      ),
      http.get('*/api/channel/5/keys', () => HttpResponse.json({ success: true, message: '', data: keys })),
      http.get('*/api/channel/5/keys/:keyId/test', ({ params }) => {
        calls.push(`test ${String(params.keyId)}`);
        return HttpResponse.json({ success: true, message: '', time: 0.42 });
      }),
      http.put('*/api/channel/5/keys/:keyId', async ({ params, request }) => {
        const { status } = (await request.json()) as { status: number };
        calls.push(`put ${String(params.keyId)} ${status}`);
        keys = keys.map((key) => (key.id === Number(params.keyId) ? { ...key, status } : key));
        return HttpResponse.json({ success: true, message: '', data: keys.find((key) => key.id === Number(params.keyId)) });
      }),
      http.delete('*/api/channel/5/keys/:keyId', ({ params }) => {
        calls.push(`delete ${String(params.keyId)}`);
        keys = keys.filter((key) => key.id !== Number(params.keyId));
        return HttpResponse.json({ success: true, message: '' });
      }),
      http.post('*/api/channel/5/keys', async ({ request }) => {
        const { keys: text } = (await request.json()) as { keys: string };
        calls.push(`post ${JSON.stringify(text)}`);
        keys = [...keys, keyRecord({ id: 3, key: 'sk-****hree' })];
        return HttpResponse.json({ success: true, message: '', data: { added: 1, skipped: 1 } });
      }),
    );
    const user = userEvent.setup();
    renderAt('/channel/edit/5');
    const rowOf = async (masked: string) => (await screen.findByText(masked)).closest('tr') as HTMLElement;

    const one = await rowOf('sk-****-one');
    expect(within(one).getByText('Enabled')).toBeInTheDocument();
    expect(within(one).getByText('12 / 1')).toBeInTheDocument();
    const two = await rowOf('sk-****-two');
    expect(within(two).getByText('Auto-disabled')).toBeInTheDocument();
    expect(within(two).getByText('Incorrect API key provided')).toBeInTheDocument();
    expect(within(two).getByText('Never')).toBeInTheDocument();
    // the strategy is the channel's; keys are added in one place, the key list (no key box in the form above it)
    expect(screen.getByRole('combobox', { name: 'How keys are used' })).toHaveTextContent(
      'One channel holding all the keys, keys in turn (round robin)',
    );
    expect(screen.getByText('Add, test and switch off keys in the key list below the form.')).toBeInTheDocument();
    expect(document.querySelector('[name="key"]')).toBeNull();
    expect(screen.getAllByLabelText('Read keys from a file', { selector: 'input' })).toHaveLength(1);
    expect(screen.getAllByRole('textbox', { name: /keys/i })).toHaveLength(1);

    await user.click(within(one).getByRole('button', { name: 'Test' }));
    expect(await screen.findByText('Key sk-****-one tested successfully in 0.42 s')).toBeInTheDocument();

    await user.click(within(await rowOf('sk-****-one')).getByRole('button', { name: 'Disable' }));
    expect(await within(await rowOf('sk-****-one')).findByText('Disabled')).toBeInTheDocument();
    await user.click(within(await rowOf('sk-****-two')).getByRole('button', { name: 'Enable' }));
    expect(await within(await rowOf('sk-****-two')).findByText('Enabled')).toBeInTheDocument();

    await user.click(within(await rowOf('sk-****-two')).getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Delete key sk-****-two?')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('key deleted')).toBeInTheDocument();
    expect(screen.queryByText('sk-****-two')).toBeNull();
    // the confirm dialog fades out; the page behind it is hidden from the accessibility tree until it has
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    // keys from a file join what was typed, and go out as one text
    const adding = screen.getByRole('textbox', { name: 'Add keys' });
    await user.click(adding);
    await user.paste('sk-typed-key');
    const file = new File(['sk-file-key\n'], 'keys.txt', { type: 'text/plain' });
    const inputs = screen.getAllByLabelText('Read keys from a file', { selector: 'input' });
    await user.upload(inputs.at(-1)!, file);
    expect(await screen.findByDisplayValue(/sk-typed-key\s+sk-file-key/)).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Add keys' }));
    expect(await screen.findByText('1 added, 1 already held')).toBeInTheDocument();
    expect(await screen.findByText('sk-****hree')).toBeInTheDocument();

    expect(calls).toEqual(['test 1', 'put 1 2', 'put 2 1', 'delete 2', 'post "sk-typed-key\\nsk-file-key"']);

    // a move needs all the keys again: only then does the form show a key box, to replace them
    await user.click(document.querySelector('input[name="base_url"]') as HTMLInputElement);
    await user.paste('https://moved.example');
    const again = await screen.findByRole('textbox', { name: 'All the keys again' });
    expect(again.tagName).toBe('TEXTAREA');
    expect(screen.getByText(/enter all the keys again, one per line; they replace the old ones/)).toBeInTheDocument();
  });
});

describe("a multi-key channel's keys at a glance", () => {
  it('says how many keys are live of all, with the worst key’s last error on hover; a single-key channel shows none', async () => {
    server.use(
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.get('*/api/channel/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            channel({ id: 3, name: 'half', multi_key: true, key_count: 2, live_key_count: 1, key_error: 'Incorrect API key provided' }),
            channel({ id: 2, name: 'whole', multi_key: true, key_count: 3, live_key_count: 3, key_error: '' }),
            channel({ id: 1, name: 'solo' }),
          ],
        }),
      ),
    );
    const user = userEvent.setup();
    renderAt('/channel');
    const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;

    // one key of two off: enabled, but not fully healthy
    const half = await rowOf('half');
    expect(within(half).getByText('Enabled')).toBeInTheDocument();
    const halfKeys = within(half).getByTestId('keys-live');
    expect(halfKeys).toHaveTextContent('1/2 keys live');
    expect(halfKeys).toHaveClass('MuiChip-colorWarning');
    await user.hover(halfKeys);
    expect(await screen.findByRole('tooltip')).toHaveTextContent("Worst key's last error: Incorrect API key provided");
    await user.unhover(halfKeys);
    await waitFor(() => expect(screen.queryByRole('tooltip')).toBeNull());

    const wholeKeys = within(await rowOf('whole')).getByTestId('keys-live');
    expect(wholeKeys).toHaveTextContent('3/3 keys live');
    expect(wholeKeys).toHaveClass('MuiChip-colorSuccess');
    await user.hover(wholeKeys);
    expect(await screen.findByRole('tooltip')).toHaveTextContent('Every key is live');

    expect(within(await rowOf('solo')).queryByTestId('keys-live')).toBeNull();
  });
});

describe('the channel form’s keys', () => {
  it('has one choice of how keys are used (no switches), and one key box with its file button', async () => {
    const posted: Array<Record<string, unknown>> = [];
    server.use(
      http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [{ id: 'gpt-4' }] })),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      http.post('*/api/channel/', async ({ request }) => {
        posted.push((await request.json()) as Record<string, unknown>);
        return HttpResponse.json({ success: true, message: '', data: { ids: [9] } });
      }),
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const user = userEvent.setup();
    renderAt('/channel/add');
    const mode = await screen.findByRole('combobox', { name: 'How keys are used' });
    expect(mode).toHaveTextContent('One key');
    expect(screen.queryByRole('switch')).toBeNull();
    expect(screen.queryByRole('checkbox')).toBeNull();
    // one key: a password box, no file
    expect(document.querySelector('input[name="key"][type="password"]')).not.toBeNull();
    expect(screen.queryAllByLabelText('Read keys from a file', { selector: 'input' })).toHaveLength(0);

    await user.click(mode);
    expect((await screen.findAllByRole('option')).map((option) => option.textContent)).toEqual([
      'One key',
      'One channel per key (batch create)',
      'One channel holding all the keys, a random key per call',
      'One channel holding all the keys, keys in turn (round robin)',
    ]);
    await user.click(screen.getByRole('option', { name: 'One channel holding all the keys, keys in turn (round robin)' }));
    expect(await screen.findByText('One key per line, all held by this one channel')).toBeInTheDocument();
    const keyBox = document.querySelector('textarea[name="key"]') as HTMLTextAreaElement;
    expect(keyBox).not.toBeNull();
    expect(screen.getAllByLabelText('Read keys from a file', { selector: 'input' })).toHaveLength(1);

    await user.click(screen.getByRole('textbox', { name: 'Name' }));
    await user.paste('pool');
    await user.click(keyBox);
    await user.paste('sk-one\nsk-two');
    await user.click(screen.getByRole('combobox', { name: 'Models' }));
    await user.click(await screen.findByRole('option', { name: 'gpt-4' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(posted).toHaveLength(1), { timeout: 15_000 });
    expect(posted[0]).toMatchObject({ name: 'pool', key: 'sk-one\nsk-two', multi_key: true, key_strategy: 'round_robin' });
    expect(posted[0]).not.toHaveProperty('key_mode');
  });

  it('sends one-api’s batch wire for a channel per key, and reads the older flags', () => {
    const base = { type: 1, name: 'pool', key: 'k1\nk2', models: ['gpt-4'], groups: ['default'] };
    const batch = channelTransform({ ...base, key_mode: 'batch' });
    expect(batch).not.toHaveProperty('multi_key');
    expect(batch).not.toHaveProperty('key_strategy');
    expect(channelTransform({ ...base, key_mode: 'random' })).toMatchObject({ multi_key: true, key_strategy: 'random' });
    expect(channelFormValues(channel({ multi_key: true, key_strategy: 'round_robin' }))).toMatchObject({ key_mode: 'round_robin' });
    expect(channelFormValues(channel({ multi_key: false }))).toMatchObject({ key_mode: 'single' });
  });
});

describe('the channel test dialog', () => {
  const listing = () =>
    http.get('*/api/channel/', () =>
      HttpResponse.json({
        success: true,
        message: '',
        data: [channel({ id: 5, name: 'pool', models: 'gpt-4,gpt-4o,o3', multi_key: true, key_count: 2, live_key_count: 2 })],
      }),
    );
  const answers: Record<string, Record<string, unknown>> = {
    'gpt-4': { success: true, message: '', time: 0.3, model: 'gpt-4', reply: 'Hello! How can I help?', key: 'sk-****a1b2', key_index: 2 },
    'gpt-4o': { success: true, message: '', time: 0.4, model: 'gpt-4o', reply: 'Hi there', key: 'sk-****c3d4', key_index: 1 },
    o3: {
      success: false,
      message: 'model o3 does not exist (type invalid_request_error)',
      time: 0.1,
      model: 'o3',
      reply: '',
      key: 'sk-****a1b2',
    },
  };

  it('shows the reply’s first words and the key that answered, masked, with its place', async () => {
    server.use(
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      listing(),
      http.get('*/api/channel/test/5/', ({ request }) =>
        HttpResponse.json({ ...answers[new URL(request.url).searchParams.get('model') ?? 'gpt-4'], auto_disable: true }),
      ),
    );
    const user = userEvent.setup();
    renderAt('/channel');
    await user.click(within((await screen.findByText('pool')).closest('tr') as HTMLElement).getByRole('button', { name: 'Test' }));
    await user.click(within(await screen.findByRole('menu')).getByText('gpt-4'));
    const result = await screen.findByTestId('test-result-gpt-4');
    expect(await within(result).findByText('Reply: “Hello! How can I help?”')).toBeInTheDocument();
    expect(within(result).getByText('Key used: sk-****a1b2 (key 2)')).toBeInTheDocument();
    expect(within(result).getByText('Answered in 0.30 s')).toBeInTheDocument();
    // automatic disabling is on: no note
    expect(screen.queryByTestId('auto-disable-off')).toBeNull();
  });

  it('tests every model in turn, a result per model, and says when automatic disabling is off', async () => {
    const tested: string[] = [];
    server.use(
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
      listing(),
      http.get('*/api/channel/test/5/', ({ request }) => {
        const model = new URL(request.url).searchParams.get('model') ?? '';
        tested.push(model);
        const answer = answers[model];
        return HttpResponse.json({ ...answer, auto_disable: false }, { status: answer.success ? 200 : 400 });
      }),
    );
    const user = userEvent.setup();
    renderAt('/channel');
    await user.click(within((await screen.findByText('pool')).closest('tr') as HTMLElement).getByRole('button', { name: 'Test' }));
    await user.click(within(await screen.findByRole('menu')).getByText('Test every model'));
    const dialog = await screen.findByRole('dialog', { name: 'Test of pool' });
    const resultOf = (model: string) => within(dialog).getByTestId(`test-result-${model}`);
    await waitFor(() => expect(within(resultOf('o3')).getByText('Failed')).toBeInTheDocument());
    expect(tested).toEqual(['gpt-4', 'gpt-4o', 'o3']);
    expect(within(resultOf('gpt-4')).getByText('Reply: “Hello! How can I help?”')).toBeInTheDocument();
    expect(within(resultOf('gpt-4o')).getByText('Reply: “Hi there”')).toBeInTheDocument();
    expect(within(resultOf('gpt-4o')).getByText('Key used: sk-****c3d4 (key 1)')).toBeInTheDocument();
    expect(within(resultOf('o3')).getByText('model o3 does not exist (type invalid_request_error)')).toBeInTheDocument();
    expect(within(resultOf('o3')).getByText('Key used: sk-****a1b2')).toBeInTheDocument();
    expect(within(dialog).getByTestId('auto-disable-off')).toHaveTextContent(
      'Automatic disabling is off: a failing channel stays enabled until you disable it.',
    );

    // the dialog's own button runs them all again
    await user.click(within(dialog).getByRole('button', { name: 'Test every model' }));
    await waitFor(() => expect(tested).toHaveLength(6));
    await waitFor(() => expect(within(resultOf('o3')).getByText('Failed')).toBeInTheDocument());
    expect(tested.slice(3)).toEqual(['gpt-4', 'gpt-4o', 'o3']);
  });
});
