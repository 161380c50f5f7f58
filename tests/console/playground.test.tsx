// The playground: it lists the user's enabled keys and their group's models,
// fetches the chosen key from its owner's endpoint, streams the answer of
// POST /v1/chat/completions piece by piece, keeps the conversation, stops on
// request, and says readably why the relay refused.
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { i18nProvider } from '../../src/i18n';
import { relayErrorHint } from '../../src/pages/PlaygroundPage';
import { RelayError } from '../../src/dataProvider/relayChat';
import { conversation, renderPlayground, say, sse, streamed } from './fixtures/playground';

const encoder = new TextEncoder();

describe('playground', () => {
  it('streams the answer through the relay with the chosen key, model, system prompt, temperature and max tokens, and keeps the history', async () => {
    const { sent, revealed } = renderPlayground(({ body }) =>
      streamed(sse((body.messages as unknown[]).length > 2 ? ['Second ', 'answer.'] : ['Hello', ', ', 'world!'])),
    );
    const user = userEvent.setup();
    // only the enabled key is offered; the first model is chosen
    const keyPicker = await screen.findByRole('combobox', { name: 'Key' });
    await waitFor(() => expect(keyPicker).toHaveTextContent('laptop'));
    await user.click(keyPicker);
    expect((await screen.findAllByRole('option')).map((option) => option.textContent)).toEqual(['laptop']);
    await user.keyboard('{Escape}');
    expect(screen.getByRole('combobox', { name: 'Model' })).toHaveTextContent('gpt-4o-mini');
    await user.click(screen.getByRole('combobox', { name: 'Model' }));
    await user.click(await screen.findByRole('option', { name: 'claude-sonnet-4-5' }));

    await user.click(screen.getByRole('textbox', { name: 'System prompt' }));
    await user.paste('Be brief.');
    await user.click(screen.getByRole('textbox', { name: 'Max tokens' }));
    await user.paste('64');
    await say('Hi there');

    await waitFor(() =>
      expect(
        within(conversation())
          .getAllByTestId('message-assistant')
          .map((node) => node.textContent),
      ).toEqual(['AssistantHello, world!']),
    );
    expect(sent[0]).toEqual({
      authorization: 'Bearer sk-secret5',
      body: {
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi there' },
        ],
        temperature: 1,
        max_tokens: 64,
        stream: true,
        // the usage of each turn is asked for, for its report
        stream_options: { include_usage: true },
      },
    });

    await say('And again');
    await waitFor(() => expect(within(conversation()).getAllByTestId('message-assistant')).toHaveLength(2));
    expect(within(conversation()).getAllByTestId('message-assistant')[1]).toHaveTextContent('Second answer.');
    expect((sent[1].body.messages as unknown[]).slice(1)).toEqual([
      { role: 'user', content: 'Hi there' },
      { role: 'assistant', content: 'Hello, world!' },
      { role: 'user', content: 'And again' },
    ]);
    // the key is asked for once and kept in memory
    expect(revealed).toEqual(['5']);

    await user.click(screen.getByRole('button', { name: 'Clear' }));
    expect(screen.getByText('Send a message to start.')).toBeInTheDocument();
  });

  it('says readably why the relay refused: a refused key, no quota, too many requests, a spent budget, a failure mid-stream', async () => {
    const answers = [
      HttpResponse.json({ error: { message: 'invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' } }, { status: 401 }),
      HttpResponse.json(
        { error: { message: 'the quota of this API key is used up', type: 'insufficient_quota', code: 'insufficient_quota' } },
        { status: 429 },
      ),
      HttpResponse.json(
        { error: { message: 'too many requests in flight', type: 'rate_limit_error', code: 'too_many_concurrent_requests' } },
        { status: 429 },
      ),
      HttpResponse.json(
        {
          error: {
            message:
              'this request would exceed the daily budget of the API key: 90 of 90 quota spent this period; the budget resets at 2026-01-02T00:00:00.000Z',
            type: 'insufficient_quota',
            code: 'budget_exceeded',
          },
        },
        { status: 429, headers: { 'retry-after': '3600' } },
      ),
      streamed(
        new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode('data: {"choices":[{"index":0,"delta":{"content":"Part"}}]}\n\n'));
            controller.enqueue(encoder.encode('data: {"error":{"message":"upstream closed the connection","type":"server_error"}}\n\n'));
            controller.close();
          },
        }),
      ),
    ];
    renderPlayground(() => answers.shift()!);
    // each failed turn keeps its refusal, in the conversation: the newest is the last
    const alert = async () => (await within(conversation()).findAllByRole('alert')).at(-1)!;

    await say('one');
    expect(await alert()).toHaveTextContent(
      'The key was refusedThe key may be disabled, expired or used up: pick another key, or see it in the keys list.The gateway said: invalid API key',
    );
    // the session is not the key: a refused key never signs the user out
    expect(localStorage.getItem('user')).not.toBeNull();
    await say('two');
    await waitFor(async () =>
      expect(await alert()).toHaveTextContent(
        "Not enough quotaTop up your balance or the key's quota, or pick another key.The gateway said: the quota of this API key is used up",
      ),
    );
    await say('three');
    await waitFor(async () =>
      expect(await alert()).toHaveTextContent(
        'Too many requests; wait a moment and try againToo many requests at once for this key or account.The gateway said: too many requests in flight',
      ),
    );
    // a spent budget is not "wait a moment": it says so, with when it resets
    await say('budget');
    await waitFor(async () =>
      expect(await alert()).toHaveTextContent(
        /^The budget for this period is used upThe budget resets at .+\.The gateway said: this request would exceed the daily budget .* resets at 2026-01-02/,
      ),
    );
    await say('four');
    await waitFor(async () => expect(await alert()).toHaveTextContent('The request was refusedupstream closed the connection'));
    // what came before the failure stays
    expect(
      within(conversation())
        .getAllByTestId('message-assistant')
        .map((node) => node.textContent),
    ).toEqual(['AssistantPart']);
  });

  it('stops an answer on request and keeps what came', async () => {
    renderPlayground(() => streamed(sse(['Once upon a time'], { open: true })));
    const user = userEvent.setup();
    await say('Tell me a story');
    expect(await within(conversation()).findByText('Once upon a time')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Stop' }));
    expect(await screen.findByRole('button', { name: 'Send' })).toBeInTheDocument();
    expect(
      within(conversation())
        .getAllByTestId('message-assistant')
        .map((node) => node.textContent),
    ).toEqual(['AssistantOnce upon a time']);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('relayErrorHint', () => {
  const now = Date.UTC(2026, 0, 1, 8, 0, 0);
  it('tells when a spent budget resets, in the console language, from Retry-After', async () => {
    const spent = new RelayError('… the budget resets at 2026-01-02T00:00:00.000Z', 429, 'budget_exceeded', 16 * 3600);
    const english = relayErrorHint(spent, 'en', now)!;
    expect(english.key).toBe('playground.errors.budget_resets');
    expect(english.values!.time).toBe(new Date(Date.UTC(2026, 0, 2, 0, 0, 0)).toLocaleString('en'));
    const chinese = relayErrorHint(spent, 'zh', now)!;
    await i18nProvider.changeLocale('zh');
    try {
      expect(i18nProvider.translate(chinese.key, chinese.values)).toBe(
        `预算将于 ${new Date(Date.UTC(2026, 0, 2)).toLocaleString('zh')} 重置。`,
      );
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });

  it('does not promise a reset when requests in flight hold the budget', () => {
    expect(relayErrorHint(new RelayError('… 600 held by requests in flight', 429, 'budget_exceeded', 2), 'en', now)).toEqual({
      key: 'playground.errors.budget_held',
    });
  });

  it('has a hint for the refusals it knows and none for the rest', () => {
    expect(relayErrorHint(new RelayError('invalid API key', 401, 'invalid_api_key'), 'en')?.key).toBe('playground.errors.key_refused_hint');
    expect(relayErrorHint(new RelayError('used up', 429, 'insufficient_quota'), 'en')?.key).toBe('playground.errors.no_quota_hint');
    expect(relayErrorHint(new RelayError('model not allowed', 403, 'model_not_allowed'), 'en')).toBeUndefined();
  });
});
