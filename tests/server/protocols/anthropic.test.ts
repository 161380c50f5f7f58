// The Anthropic Messages adaptor: the shared contract over recorded fixtures,
// then the vendor's particulars and the old converter's defects that
// must not come back: a system prompt as a fake turn, dropped stop sequences
// and sampling parameters (zero values included), finish_reason "" on
// intermediate chunks, missing ids, models and indexes, swallowed errors.
import { describe, expect, it } from 'vitest';
import { anthropicAdaptor, defaultMaxTokens } from '../../../server/protocols/upstream/anthropic';
import { UPSTREAM_ADAPTORS, adaptorForChannelType } from '../../../server/protocols/upstream';
import {
  isUpstreamFailure,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type UpstreamFailure,
} from '../../../server/protocols/types';
import { callFor, decodeStream, describeAdaptor } from './contract';

describeAdaptor('anthropic', anthropicAdaptor);

const MODEL = 'claude-3-5-haiku-20241022';
const encode = (request: Partial<ChatRequest>, stream = false): Record<string, unknown> =>
  JSON.parse(anthropicAdaptor.encodeChat({ model: MODEL, messages: [], ...request }, callFor('chat', MODEL, stream))) as Record<
    string,
    unknown
  >;
const decode = (answer: unknown): ChatResponse | UpstreamFailure =>
  anthropicAdaptor.decodeChat(JSON.stringify(answer), callFor('chat', MODEL, false));
const answered = (answer: unknown): ChatResponse => {
  const decoded = decode(answer);
  if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
  return decoded;
};
const sse = (...events: Array<Record<string, unknown> & { type: string }>): string =>
  events.map((event) => `event: ${event.type}\r\ndata: ${JSON.stringify(event)}\r\n\r\n`).join('');
const start = (usage: Record<string, number> = { input_tokens: 5, output_tokens: 1 }) => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, usage },
});
function streamOf(wire: string): { chunks: ChatChunk[]; decoder: ReturnType<typeof anthropicAdaptor.decodeChatStream> } {
  const decoder = anthropicAdaptor.decodeChatStream(callFor('chat', MODEL, true));
  const chunks = [...decoder.push(Buffer.from(wire)), ...decoder.end()];
  return { chunks, decoder };
}

describe('anthropic adaptor: registry and target', () => {
  it('is the adaptor for channel type 14', () => {
    expect(UPSTREAM_ADAPTORS.anthropic).toBe(anthropicAdaptor);
    expect(adaptorForChannelType(14)).toBe(anthropicAdaptor);
  });

  it("uses the channel's base URL (a mirror or an emulator) and Anthropic's headers", () => {
    const target = anthropicAdaptor.target(
      { type: 14, key: 'sk-ant-x', baseUrl: 'http://127.0.0.1:9999/anthropic/', other: '' },
      callFor('chat', MODEL, true),
    );
    expect(target).toEqual({
      url: 'http://127.0.0.1:9999/anthropic/v1/messages',
      method: 'POST',
      headers: {
        'x-api-key': 'sk-ant-x',
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
    });
  });

  it('offers chat only, and refuses to target anything else', () => {
    expect([...anthropicAdaptor.operations]).toEqual(['chat']);
    expect(anthropicAdaptor.balance).toBeUndefined();
    const target = anthropicAdaptor.target({ type: 14, key: 'k', baseUrl: '', other: '' }, callFor('embeddings', MODEL, false));
    expect(isUpstreamFailure(target)).toBe(true);
  });
});

describe('anthropic adaptor: requests', () => {
  it('puts system and developer messages in `system`, never as a fake turn', () => {
    const body = encode({
      messages: [
        { role: 'system', content: 'Rule one.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Rule two.' }] },
        { role: 'user', content: 'Again' },
      ],
    });
    expect(body.system).toBe('Rule one.\n\nRule two.');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Again' },
        ],
      },
    ]);
    expect(JSON.stringify(body.messages)).not.toMatch(/Okay/);
    expect(encode({ messages: [{ role: 'user', content: 'only' }] })).not.toHaveProperty('system');
  });

  it('keeps prompt-cache marks on system parts by sending `system` as text blocks', () => {
    const body = encode({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'A long manual.', cache_control: { type: 'ephemeral' } }] },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Question' },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'A long manual.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Be brief.' },
    ]);
  });

  it('passes temperature, top_p, top_k and stop sequences as given, zeros included', () => {
    const body = encode({
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0,
      top_p: 0.5,
      top_k: 7,
      n: 3,
      max_tokens: 99,
      stop: 'END',
    });
    expect(body).toMatchObject({ temperature: 0, top_p: 0.5, top_k: 7, max_tokens: 99, stop_sequences: ['END'] });
    expect(encode({ messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b'] }).stop_sequences).toEqual(['a', 'b']);
    expect(encode({ messages: [{ role: 'user', content: 'x' }] })).not.toHaveProperty('top_k');
  });

  it('takes max_tokens, else max_completion_tokens, else the default the relay reserves (4096)', () => {
    expect(encode({ messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 300 }).max_tokens).toBe(300);
    expect(encode({ messages: [{ role: 'user', content: 'x' }] }).max_tokens).toBe(defaultMaxTokens(MODEL));
    expect(defaultMaxTokens('claude-unknown-model')).toBe(4096);
    // the catalog's maximum output comes from the relay, on the call
    const call = { ...callFor('chat', 'claude-unknown-model', false), modelMaxOutputTokens: 12_345 };
    expect(
      JSON.parse(anthropicAdaptor.encodeChat({ model: 'claude-unknown-model', messages: [{ role: 'user', content: 'x' }] }, call))
        .max_tokens,
    ).toBe(12_345);
    expect(defaultMaxTokens('claude-unknown-model', 12_345)).toBe(12_345);
  });

  it('asks for a stream only when the call streams, and sends `user` as metadata.user_id', () => {
    expect(encode({ messages: [{ role: 'user', content: 'x' }], stream: true }, true).stream).toBe(true);
    expect(encode({ messages: [{ role: 'user', content: 'x' }] })).not.toHaveProperty('stream');
    expect(encode({ messages: [{ role: 'user', content: 'x' }], user: 'u-1' }).metadata).toEqual({ user_id: 'u-1' });
  });

  it('turns image parts into image blocks: data URLs as base64, http(s) URLs as url sources', () => {
    const body = encode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'text', text: 'Describe both.', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: 'https://upload.example/dog.png', detail: 'high' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          { type: 'text', text: 'Describe both.', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'url', url: 'https://upload.example/dog.png' } },
        ],
      },
    ]);
  });

  it('maps tools, tool calls and tool results, merging consecutive results into one user turn', () => {
    const body = encode({
      tools: [
        { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
        { type: 'function', function: { name: 'now', description: 'The time' } },
      ],
      messages: [
        { role: 'user', content: 'Look up cats and tell the time' },
        {
          role: 'assistant',
          content: 'Doing both.',
          tool_calls: [
            { id: 'toolu_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"cats"}' } },
            { id: 'toolu_b', type: 'function', function: { name: 'now', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_a', content: 'Cats purr.' },
        { role: 'tool', tool_call_id: 'toolu_b', content: [{ type: 'text', text: '12:00' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.tools).toEqual([
      { name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'now', description: 'The time', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: 'Look up cats and tell the time' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Doing both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'lookup', input: { q: 'cats' } },
          { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'Cats purr.' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: '12:00' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('maps tool_choice: auto, required → any, none, a named function → tool; parallel_tool_calls false', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    const choice = (tool_choice: ChatRequest['tool_choice'], extra: Partial<ChatRequest> = {}) =>
      encode({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice, ...extra }).tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'f' } })).toEqual({ type: 'tool', name: 'f' });
    expect(choice(undefined)).toBeUndefined();
    expect(choice(undefined, { parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice('required', { parallel_tool_calls: false })).toEqual({ type: 'any', disable_parallel_tool_use: true });
    // no tools, no tool_choice (the API refuses one alone)
    expect(encode({ messages: [{ role: 'user', content: 'x' }], tool_choice: 'auto' })).not.toHaveProperty('tool_choice');
  });
});

describe('anthropic adaptor: whole answers', () => {
  const base = {
    id: 'msg_9',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 4 },
  };

  it("keeps the vendor's id and model, sets index and created", () => {
    const answer = answered({ ...base, content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn' });
    expect(answer).toMatchObject({ id: 'msg_9', object: 'chat.completion', model: 'claude-sonnet-4-5-20250929', created: 1_700_000_000 });
    expect(answer.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }]);
  });

  it('maps stop reasons: end_turn and stop_sequence → stop, max_tokens → length, tool_use → tool_calls, refusal → content_filter', () => {
    const reason = (stop_reason: string) =>
      answered({ ...base, content: [{ type: 'text', text: 'x' }], stop_reason }).choices[0].finish_reason;
    expect(reason('end_turn')).toBe('stop');
    expect(reason('stop_sequence')).toBe('stop');
    expect(reason('max_tokens')).toBe('length');
    expect(reason('tool_use')).toBe('tool_calls');
    expect(reason('refusal')).toBe('content_filter');
  });

  it('joins text blocks, turns thinking into reasoning_content and tool_use into tool calls', () => {
    const answer = answered({
      ...base,
      stop_reason: 'tool_use',
      content: [
        { type: 'thinking', thinking: 'The user wants a lookup.', signature: 'sig' },
        { type: 'text', text: 'Let me ' },
        { type: 'text', text: 'check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x', n: 2 } },
      ],
    });
    expect(answer.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Let me check.',
      reasoning_content: 'The user wants a lookup.',
      tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x","n":2}' } }],
    });
    const toolOnly = answered({ ...base, stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_2', name: 'now', input: {} }] });
    expect(toolOnly.choices[0].message.content).toBeNull();
    expect(toolOnly.choices[0].message.tool_calls![0].function.arguments).toBe('{}');
  });

  it('bills cache reads and writes inside the prompt, reads as cached tokens', () => {
    const answer = answered({
      ...base,
      content: [{ type: 'text', text: 'x' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, output_tokens: 7 },
    });
    expect(answer.usage).toEqual({
      prompt_tokens: 160,
      completion_tokens: 7,
      total_tokens: 167,
      prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 50 },
    });
  });

  it('an error inside a 200 body is a failure, not an answer', () => {
    const failure = decode({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(failure).toMatchObject({ status: 529, message: 'Overloaded', type: 'overloaded_error', deadKey: false, retryable: true });
    expect(isUpstreamFailure(anthropicAdaptor.decodeChat('<html>bad gateway</html>', callFor('chat', MODEL, false)))).toBe(true);
  });
});

describe('anthropic adaptor: streams', () => {
  it('never says finish_reason "" mid-stream, and every chunk has the id, model and index', () => {
    const { chunks } = streamOf(
      sse(
        start(),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'ping' },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 2 } },
        { type: 'message_stop' },
      ),
    );
    expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual([null, null, null, 'length']);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'msg_1', object: 'chat.completion.chunk', model: MODEL, created: 1_700_000_000 });
      expect(chunk.choices[0].index).toBe(0);
    }
  });

  it('reads usage from message_start and message_delta (whose output count is cumulative; later prompt counts win)', () => {
    const { decoder } = streamOf(
      sse(
        start({ input_tokens: 20, cache_read_input_tokens: 30, cache_creation_input_tokens: 0, output_tokens: 1 }),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } },
        { type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 5 } },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12, input_tokens: 21 } },
        { type: 'message_stop' },
      ),
    );
    expect(decoder.usage()).toEqual({ promptTokens: 51, completionTokens: 12, cachedPromptTokens: 30, cacheCreationTokens: 0 });
    expect(decoder.done()).toBe(true);
  });

  it('reports no usage for a stream cut before message_delta (the relay estimates; nothing invented)', () => {
    const { chunks, decoder } = streamOf(
      sse(
        start(),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      ),
    );
    expect(decoder.usage()).toBeUndefined();
    expect(decoder.done()).toBe(false);
    expect(chunks.some((chunk) => chunk.choices[0].finish_reason)).toBe(false);
  });

  it('surfaces an error event as the failure, not a silent end', () => {
    const { decoder } = streamOf(sse(start(), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(decoder.failure()).toMatchObject({
      status: 529,
      message: 'Overloaded',
      type: 'overloaded_error',
      retryable: true,
      deadKey: false,
    });
    expect(decoder.done()).toBe(false);
  });

  it('streams thinking as reasoning_content, two tool calls by their own indexes, and {} for a tool without input', () => {
    const wire = sse(
      start(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Two tools.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'lookup', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"cats"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 40 } },
      { type: 'message_stop' },
    );
    const { chunks } = streamOf(wire);
    const deltas = chunks.map((chunk) => chunk.choices[0].delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Two tools.' },
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'lookup', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'now', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ]);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    // the same chunks however the bytes are cut (CRLF framing here)
    const bytes = Buffer.from(wire);
    const call = callFor('chat', MODEL, true);
    const whole = decodeStream(anthropicAdaptor, call, bytes);
    for (let offset = 1; offset < bytes.length; offset += 7)
      expect(decodeStream(anthropicAdaptor, call, bytes, [offset]).chunks).toEqual(whole.chunks);
  });
});

describe('anthropic adaptor: failures', () => {
  const failure = (status: number, type: string, message: string) =>
    anthropicAdaptor.failure(status, JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' }));

  it("reads Anthropic's dead-key words: invalid key, no permission, billing, out of credit", () => {
    expect(failure(401, 'authentication_error', 'invalid x-api-key')).toMatchObject({
      deadKey: true,
      retryable: true,
      code: 'authentication_error',
    });
    expect(failure(403, 'permission_error', 'Your API key does not have permission to use the specified resource.')).toMatchObject({
      deadKey: true,
      retryable: true,
    });
    expect(failure(402, 'billing_error', 'Billing error')).toMatchObject({ deadKey: true });
    expect(
      failure(
        400,
        'invalid_request_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      ),
    ).toMatchObject({
      status: 400,
      deadKey: true,
      retryable: true,
    });
  });

  it('overloaded, api and rate-limit errors may succeed elsewhere; a bad request would fail anywhere', () => {
    expect(failure(529, 'overloaded_error', 'Overloaded')).toMatchObject({ status: 529, deadKey: false, retryable: true });
    expect(failure(500, 'api_error', 'Internal server error')).toMatchObject({ deadKey: false, retryable: true });
    expect(failure(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit')).toMatchObject({
      deadKey: false,
      retryable: true,
    });
    expect(failure(400, 'invalid_request_error', 'messages: roles must alternate')).toMatchObject({
      status: 400,
      message: 'messages: roles must alternate',
      deadKey: false,
      retryable: false,
    });
    expect(failure(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.')).toMatchObject({ retryable: false });
  });

  it('keeps what a non-Anthropic error page said', () => {
    const page = anthropicAdaptor.failure(502, '<html><body>Bad gateway</body></html>');
    expect(page).toMatchObject({ status: 502, deadKey: false, retryable: true });
    expect(page.message).toContain('Bad gateway');
  });
});

describe('extended thinking from reasoning_effort', () => {
  const SONNET = 'claude-sonnet-4-5';
  const encodeFor = (model: string, request: Partial<ChatRequest>) =>
    JSON.parse(
      anthropicAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'think' }], ...request }, callFor('chat', model, false)),
    ) as Record<string, unknown>;

  it('asks a model that thinks for a budget by effort, within three quarters of max_tokens, without the sampling Anthropic refuses with it', () => {
    const body = encodeFor(SONNET, { reasoning_effort: 'medium', max_tokens: 20000, temperature: 0.2, top_k: 5, top_p: 0.5 });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_k');
    expect(body).not.toHaveProperty('top_p');
    // the answer keeps a quarter: a budget of max_tokens - 1 left it one token
    expect(encodeFor(SONNET, { reasoning_effort: 'high', max_tokens: 4000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
  });

  it('asks for none where Anthropic would refuse it: a model that does not think, a budget under 1,024, a forced tool', () => {
    expect(encodeFor(MODEL, { reasoning_effort: 'high', max_tokens: 20000, temperature: 0.2 })).toMatchObject({ temperature: 0.2 });
    expect(encodeFor(MODEL, { reasoning_effort: 'high', max_tokens: 20000 })).not.toHaveProperty('thinking');
    expect(encodeFor(SONNET, { reasoning_effort: 'low', max_tokens: 1000 })).not.toHaveProperty('thinking');
    const forced = encodeFor(SONNET, {
      reasoning_effort: 'low',
      max_tokens: 4000,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    expect(forced.tool_choice).toEqual({ type: 'any' });
    expect(forced).not.toHaveProperty('thinking');
  });

  it('keeps a thinking object the client sent as it is', () => {
    expect(
      encodeFor(SONNET, { thinking: { type: 'enabled', budget_tokens: 2048 }, reasoning_effort: 'high', max_tokens: 30000 }).thinking,
    ).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });
});
