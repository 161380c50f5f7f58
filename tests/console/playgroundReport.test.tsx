// The playground reports each turn: the tokens in, out and cached and the cost
// the gateway billed (the log row of the call's X-Request-Id, in the display
// currency), the time to the first token and in all, and a link to the log
// row; a failed turn is marked with its refusal in the conversation; it opens
// on a model a passing channel serves; and it copies the current request as
// curl, Python or TypeScript with the key as a placeholder.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChannelRecord } from '../../common/records';
import { openingModel, passingModels } from '../../src/pages/playgroundModels';
import { clock } from '../../src/pages/playgroundTurns';
import { logListPath } from '../../src/resources/log/logLink';
import { conversation, logSearch, renderPlayground, say, sse, streamed } from './fixtures/playground';
import { screenWidth } from './screenWidth';

const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } };
const BILLED_ROW = {
  id: 0,
  type: 2,
  request_id: 'req-abc',
  model_name: 'gpt-4o-mini',
  quota: 25000,
  prompt_tokens: 12,
  completion_tokens: 7,
  details: { cachedTokens: 4 },
};

const report = () => within(conversation()).getByTestId('turn-report');

afterEach(() => {
  vi.restoreAllMocks();
  // jsdom has no scrollIntoView: a test that gives it one takes it back
  delete (Element.prototype as Partial<Element>).scrollIntoView;
});

describe('playground turn report', () => {
  it("shows each answer's tokens, its billed cost in the display currency, its timings and a link to its log row", async () => {
    // the request's start, its first piece, its end
    vi.spyOn(clock, 'now').mockReturnValueOnce(1000).mockReturnValueOnce(1420).mockReturnValueOnce(2300);
    // the relay writes the row in a batch after the answer: the log has it only once the test has seen the stand-in
    let written = false;
    const { logReads } = renderPlayground(() => streamed(sse(['Hi', ' there'], { usage: USAGE }), { 'x-request-id': 'req-abc' }), {
      logRows: (requestId) => (written ? [{ ...BILLED_ROW, request_id: requestId }] : []),
    });
    await say('Hello');
    // until the row is read, the stream's own usage stands in and the cost says it is being read
    await waitFor(() =>
      expect(report()).toHaveTextContent('Input 12Output 7Cached 4Cost: reading the log…First token 0.42 sTotal 1.30 sLog row'),
    );
    // the first read found nothing; only then does the row exist
    await waitFor(() => expect(logReads.length).toBeGreaterThan(0));
    written = true;
    // then the billed figure: 25000 quota at 500000 a dollar
    await waitFor(() => expect(report()).toHaveTextContent('Input 12Output 7Cached 4Cost $0.05First token 0.42 sTotal 1.30 sLog row'));
    // read by its request id until it was there, then no more
    expect(logReads.length).toBeGreaterThan(1);
    expect(new Set(logReads)).toEqual(new Set(['req-abc']));

    const link = within(report()).getByRole('link', { name: 'Log row' });
    expect(link).toHaveAttribute('href', logListPath({ request_id: 'req-abc' }));
    await userEvent.setup().click(link);
    expect(await screen.findByTestId('log-list')).toBeInTheDocument();
    expect(JSON.parse(new URLSearchParams(logSearch).get('filter')!)).toEqual({ request_id: 'req-abc' });
  });

  it("shows the billed tokens over the stream's, and the cost in quota units when the operator chose them", async () => {
    localStorage.setItem('display_in_currency', 'false');
    renderPlayground(() => streamed(sse(['Hi'], { usage: { prompt_tokens: 10, completion_tokens: 1 } }), { 'x-request-id': 'req-units' }), {
      logRows: (requestId) => [{ ...BILLED_ROW, request_id: requestId, prompt_tokens: 11, completion_tokens: 2, details: null }],
    });
    await say('Hello');
    await waitFor(() =>
      expect(report()).toHaveTextContent(/^Input 11Output 2Cached 0Cost 25\.0kFirst token \d+\.\d\d sTotal \d+\.\d\d sLog row$/),
    );
  });

  it('says so when the log never has the row', async () => {
    renderPlayground(() => streamed(sse(['Hi']), { 'x-request-id': 'req-lost' }));
    await say('Hello');
    await waitFor(() => expect(report()).toHaveTextContent('Cost not in the log yet'), { timeout: 15_000 });
    expect(within(report()).getByRole('link', { name: 'Log row' })).toHaveAttribute('href', logListPath({ request_id: 'req-lost' }));
  });

  it('marks a failed turn with its refusal in the conversation, at that turn, on a 390 px screen too', async () => {
    screenWidth(390);
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = vi.fn(function (this: Element) {
      scrolled.push(this);
    });
    const answers = [
      streamed(sse(['First answer.'])),
      HttpResponse.json(
        { error: { message: 'the quota of this API key is used up', type: 'insufficient_quota', code: 'insufficient_quota' } },
        { status: 429, headers: { 'x-request-id': 'req-refused' } },
      ),
    ];
    renderPlayground(() => answers.shift()!);
    await say('one');
    await within(conversation()).findByText('First answer.');
    await say('two');
    const alert = await within(conversation()).findByRole('alert');
    expect(alert).toHaveTextContent("Not enough quotaTop up your balance or the key's quota, or pick another key.");
    // the turns in order: the failure follows the message that failed, and nothing is left below the conversation
    const turns = within(conversation()).getAllByTestId(/^turn-(user|assistant)$/);
    expect(turns.map((turn) => turn.getAttribute('data-testid'))).toEqual(['turn-user', 'turn-assistant', 'turn-user', 'turn-assistant']);
    expect(turns[2]).toHaveTextContent('two');
    expect(turns[3]).toContainElement(alert);
    expect(screen.getAllByRole('alert')).toEqual([alert]);
    // the failed turn links to its (error) log row, with no cost, and the log is scrolled to its end, past the refusal
    const failedReport = within(turns[3]).getByTestId('turn-report');
    expect(failedReport).not.toHaveTextContent('Cost');
    expect(within(failedReport).getByRole('link', { name: 'Log row' })).toHaveAttribute('href', logListPath({ request_id: 'req-refused' }));
    const end = scrolled.at(-1)!;
    expect(conversation()).toContainElement(end as HTMLElement);
    expect(alert.compareDocumentPosition(end) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    // the failed message is not sent again; dismissing the refusal removes the empty turn
    fireEvent.click(within(alert).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(within(conversation()).queryByRole('alert')).toBeNull());
    expect(within(conversation()).getAllByTestId(/^turn-(user|assistant)$/)).toHaveLength(3);
  });
});

const channel = (fields: Partial<ChannelRecord>) =>
  ({
    id: 1,
    name: 'c',
    type: 1,
    status: 1,
    models: '',
    group: 'default',
    test_time: 0,
    response_time: 0,
    test_error: '',
    ...fields,
  }) as ChannelRecord;

describe('playground opening model', () => {
  it('opens on the first model a channel that passed its last test serves (admins read the channels)', async () => {
    renderPlayground(() => streamed(sse(['ok'])), {
      role: 10,
      channels: [
        channel({ id: 1, models: 'gpt-4o-mini', test_time: 1_700_000_000, response_time: 900, test_error: 'HTTP 401: invalid key' }),
        channel({ id: 2, models: 'gpt-4o-mini', status: 2, test_time: 1_700_000_000, response_time: 300 }),
        channel({ id: 3, models: 'claude-sonnet-4-5,other', test_time: 1_700_000_000, response_time: 500 }),
      ],
    });
    const model = await screen.findByRole('combobox', { name: 'Model' });
    await waitFor(() => expect(model).toHaveTextContent('claude-sonnet-4-5'));
  });

  it('opens on the first model when no channel is known to pass', async () => {
    renderPlayground(() => streamed(sse(['ok'])), { role: 10, channels: [channel({ models: 'claude-sonnet-4-5' })] });
    const model = await screen.findByRole('combobox', { name: 'Model' });
    await waitFor(() => expect(model).toHaveTextContent('gpt-4o-mini'));
  });

  it('picks among the models of passing channels only', () => {
    const passing = passingModels([
      channel({ models: 'a, b', test_time: 5 }),
      channel({ models: 'c', test_time: 5, test_error: 'timed out' }),
      channel({ models: 'd', test_time: 0 }),
    ]);
    expect([...passing]).toEqual(['a', 'b']);
    expect(openingModel(['c', 'd', 'b', 'a'], passing)).toBe('b');
    expect(openingModel(['c', 'd'], passing)).toBe('c');
    expect(openingModel([], passing)).toBe('');
  });
});

describe('playground copy as code', () => {
  it('copies the current request as curl, Python and TypeScript, with the key as a placeholder', async () => {
    renderPlayground(() => streamed(sse(['Hello!'])));
    const user = userEvent.setup();
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Key' })).toHaveTextContent('laptop'));
    await user.click(screen.getByRole('textbox', { name: 'System prompt' }));
    await user.paste('Be brief.');
    await user.click(screen.getByRole('textbox', { name: 'Max tokens' }));
    await user.paste('64');
    await say('Hi there');
    await within(conversation()).findByText('Hello!');
    // the draft goes in as the last message; its quote must survive the shell
    await user.click(screen.getByRole('textbox', { name: 'Message' }));
    await user.paste("It's next");
    const origin = window.location.origin;
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi there' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: "It's next" },
    ];

    await user.click(screen.getByRole('button', { name: 'Copy as curl' }));
    const curl = await navigator.clipboard.readText();
    const [comment, command, contentType, authorization, data] = curl
      .split(' \\\n')
      .flatMap((part, index) => (index ? [part] : part.split('\n')));
    expect([comment, command, contentType, authorization]).toEqual([
      '# Key: laptop (paste it from the keys list)',
      `curl ${origin}/v1/chat/completions`,
      '  -H "Content-Type: application/json"',
      '  -H "Authorization: Bearer sk-..."',
    ]);
    expect(data.startsWith("  -d '") && data.endsWith("'")).toBe(true);
    const body = data.slice(6, -1).replace(/'\\''/g, "'");
    expect(JSON.parse(body)).toEqual({ model: 'gpt-4o-mini', messages, temperature: 1, max_tokens: 64 });

    await user.click(screen.getByRole('button', { name: 'Copy as Python (openai SDK)' }));
    expect(await navigator.clipboard.readText()).toBe(
      [
        'from openai import OpenAI',
        '',
        'client = OpenAI(',
        `    base_url="${origin}/v1",`,
        '    api_key="sk-...",  # Key: laptop (paste it from the keys list)',
        ')',
        '',
        'completion = client.chat.completions.create(',
        '    model="gpt-4o-mini",',
        '    messages=[',
        '        { "role": "system", "content": "Be brief." },',
        '        { "role": "user", "content": "Hi there" },',
        '        { "role": "assistant", "content": "Hello!" },',
        '        { "role": "user", "content": "It\'s next" },',
        '    ],',
        '    temperature=1,',
        '    max_tokens=64,',
        ')',
        'print(completion.choices[0].message.content)',
        '',
      ].join('\n'),
    );

    await user.click(screen.getByRole('button', { name: 'Copy as TypeScript (openai SDK)' }));
    expect(await navigator.clipboard.readText()).toBe(
      [
        "import OpenAI from 'openai';",
        '',
        'const client = new OpenAI({',
        `  baseURL: "${origin}/v1",`,
        '  apiKey: "sk-...", // Key: laptop (paste it from the keys list)',
        '});',
        '',
        'const completion = await client.chat.completions.create({',
        '  model: "gpt-4o-mini",',
        '  messages: [',
        '    { role: "system", content: "Be brief." },',
        '    { role: "user", content: "Hi there" },',
        '    { role: "assistant", content: "Hello!" },',
        '    { role: "user", content: "It\'s next" },',
        '  ],',
        '  temperature: 1,',
        '  max_tokens: 64,',
        '});',
        'console.log(completion.choices[0].message.content);',
        '',
      ].join('\n'),
    );
    // the key the console fetched to send is never in a copy
    for (const text of [curl, await navigator.clipboard.readText()]) expect(text).not.toContain('secret5');
  });
});
