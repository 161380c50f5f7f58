// The OpenAI Responses inbound codec on its own: the request in the chat form,
// what it refuses, chat answers written back as a Response and as Responses'
// exact event sequence, and the usage of passed-through answers (a stream
// fixture in OpenAI's wire format split at every byte).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openaiResponses } from '../../../server/protocols/inbound/openaiResponses';
import { encodeResponse, ResponsesStreamEncoder } from '../../../server/protocols/inbound/openaiResponsesAnswer';
import { chatRequestOf } from '../../../server/protocols/inbound/openaiResponsesRequest';
import type { ChatChunk, ChatResponse } from '../../../server/protocols/types';

const STREAM = readFileSync(new URL('./__fixtures__/openai-responses/stream.txt', import.meta.url));

describe('a Responses request in the chat form', () => {
  it('maps instructions, message items with text and images, function tools, calls and outputs, and the settings', () => {
    const chat = chatRequestOf({
      model: 'gpt-x',
      instructions: 'Be brief.',
      stream: true,
      store: true,
      input: [
        { role: 'developer', content: 'Use metric units.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'weather here?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'high' },
            { type: 'input_image', file_id: 'file-1', detail: 'auto' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'snow' }] },
        { type: 'function_call', call_id: 'call_c', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_c', output: '12:00' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
        { type: 'function', name: 'get_time', parameters: null, strict: false },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.7,
      max_output_tokens: 300,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_object' } },
      safety_identifier: 'user-hash',
      metadata: { ticket: '1' },
    });
    expect(chat).toEqual({
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use metric units.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_b', content: 'snow' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_c', content: '12:00' },
      ],
      stream: true,
      max_tokens: 300,
      temperature: 0.2,
      top_p: 0.7,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: true,
          },
        },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} }, strict: false } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
      // the web_search tool travels as chat's web_search_options (each vendor's own search, or left out)
      web_search_options: {},
      reasoning_effort: 'low',
      user: 'user-hash',
    });
  });

  it('takes a string input as one user message, and a json_schema format as chat response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      chatRequestOf({
        model: 'm',
        input: 'hi',
        user: 'u',
        text: { format: { type: 'json_schema', name: 'out', schema, strict: true, description: 'd' } },
      }),
    ).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema, description: 'd', strict: true } },
      user: 'u',
    });
  });

  it('refuses what asks for stored state, before anything is held; takes store', () => {
    expect(openaiResponses.check('chat', { model: 'm', input: 'x', previous_response_id: 'resp_1' })).toEqual({
      message: 'previous_response_id is not supported: this gateway does not store responses; send the whole conversation in input',
      code: 'unsupported_parameter',
      param: 'previous_response_id',
    });
    expect(openaiResponses.check('chat', { model: 'm', input: 'x', conversation: 'conv_1' })).toMatchObject({ param: 'conversation' });
    expect(openaiResponses.check('chat', { model: 'm', input: 'x', store: true, previous_response_id: null })).toBeUndefined();
  });

  it('reads the output limit, writes a lowered one as max_output_tokens, and bounds the prompt above its count', () => {
    const body = { model: 'gpt-4', instructions: 'Be brief.', input: [{ role: 'user', content: 'hello there' }], max_output_tokens: 50 };
    expect(openaiResponses.outputLimit(body)).toBe(50);
    expect(JSON.parse(openaiResponses.encodeChanged(body, { model: 'gpt-4o', outputLimit: 20, askUsage: false }))).toEqual({
      ...body,
      model: 'gpt-4o',
      max_output_tokens: 20,
    });
    expect(JSON.parse(openaiResponses.encodeChanged(body, { model: 'gpt-4o', askUsage: false }))).toEqual({ ...body, model: 'gpt-4o' });
    const counted = openaiResponses.promptTokens('chat', body, 'gpt-4', {});
    expect(counted).toBeGreaterThan(6);
    expect(openaiResponses.promptTokens('chat', body, 'gpt-4', { bound: true })).toBeGreaterThanOrEqual(counted);
  });
});

const USAGE = { promptTokens: 30, completionTokens: 12, cachedPromptTokens: 10, reasoningTokens: 4 };
const RESPONSES_USAGE = {
  input_tokens: 30,
  input_tokens_details: { cached_tokens: 10 },
  output_tokens: 12,
  output_tokens_details: { reasoning_tokens: 4 },
  total_tokens: 42,
};

describe('a chat answer written back as a Response', () => {
  const chat = (
    message: ChatResponse['choices'][number]['message'],
    finish: ChatResponse['choices'][number]['finish_reason'],
  ): ChatResponse => ({
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'vendor-model',
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
  });

  it('has reasoning, message and function_call items, the request settings repeated, and the usage', () => {
    const response = JSON.parse(
      encodeResponse(
        chat(
          {
            role: 'assistant',
            content: 'Let me check.',
            reasoning_content: 'thinking',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          'tool_calls',
        ),
        USAGE,
        'gpt-x',
        { instructions: 'Be brief.', temperature: 0.5, tools: [{ type: 'function', name: 'f' }], metadata: { a: 'b' }, user: 'u' },
      ),
    );
    expect(response).toEqual({
      id: 'resp_abc',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: null,
      max_tool_calls: null,
      model: 'gpt-x',
      output: [
        { id: 'rs_abc', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'thinking' }] },
        {
          id: 'msg_abc',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Let me check.' }],
          role: 'assistant',
        },
        { id: 'fc_abc_0', type: 'function_call', status: 'completed', arguments: '{"x":1}', call_id: 'call_1', name: 'f' },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      service_tier: 'default',
      store: false,
      temperature: 0.5,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [{ type: 'function', name: 'f' }],
      top_p: 1,
      truncation: 'disabled',
      usage: RESPONSES_USAGE,
      user: 'u',
      metadata: { a: 'b' },
    });
  });

  it('is incomplete with max_output_tokens as the reason when the limit cut it', () => {
    const response = JSON.parse(encodeResponse(chat({ role: 'assistant', content: 'Once upon' }, 'length'), USAGE, 'gpt-x', {}));
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete' }],
    });
  });
});

/** Events of an encoded stream: their names (as the `event:` line says) and data. */
function parseEvents(text: string): Array<{ type: string; [field: string]: unknown }> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      const [name, data] = event.split('\n');
      const parsed = JSON.parse(data.slice('data: '.length));
      expect(name).toBe(`event: ${parsed.type}`);
      return parsed;
    });
}

const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk => ({
  id: 'chatcmpl-s1',
  object: 'chat.completion.chunk',
  created: 1_700_000_100,
  model: 'vendor-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe("chat chunks written as Responses' event stream", () => {
  it('is the exact sequence: created, in_progress, each item added, its deltas and dones, completed with usage; numbered from 0', () => {
    const encoder = new ResponsesStreamEncoder('gpt-x', { instructions: 'Be brief.' });
    let text = encoder.chunks(
      [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'hmm' }), chunk({ content: 'Hel' })],
      undefined,
      'fallback',
    );
    text += encoder.chunks([chunk({ content: 'lo' })], undefined, 'fallback');
    text += encoder.chunks(
      [
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
        chunk({}, 'tool_calls'),
      ],
      undefined,
      'fallback',
    );
    text += encoder.end(USAGE, 'fallback');
    const events = parseEvents(text);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events[0]).toMatchObject({
      response: {
        id: 'resp_s1',
        object: 'response',
        created_at: 1_700_000_100,
        status: 'in_progress',
        model: 'gpt-x',
        instructions: 'Be brief.',
        output: [],
      },
    });
    expect(events[10]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 10,
      item_id: 'msg_s1_1',
      output_index: 1,
      content_index: 0,
      delta: 'Hel',
      logprobs: [],
    });
    expect(events[12]).toEqual({
      type: 'response.output_text.done',
      sequence_number: 12,
      item_id: 'msg_s1_1',
      output_index: 1,
      content_index: 0,
      text: 'Hello',
      logprobs: [],
    });
    expect(events[15]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 15,
      output_index: 2,
      item: { id: 'fc_s1_2', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_1', name: 'f' },
    });
    expect(events[18]).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: 18,
      item_id: 'fc_s1_2',
      output_index: 2,
      arguments: '{"x":1}',
    });
    const completed = events.at(-1)!.response as Record<string, unknown>;
    expect(completed).toMatchObject({ id: 'resp_s1', status: 'completed', incomplete_details: null, usage: RESPONSES_USAGE });
    expect(completed.output).toEqual([
      { id: 'rs_s1_0', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'hmm' }] },
      {
        id: 'msg_s1_1',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello' }],
        role: 'assistant',
      },
      { id: 'fc_s1_2', type: 'function_call', status: 'completed', arguments: '{"x":1}', call_id: 'call_1', name: 'f' },
    ]);
  });

  it('ends with response.incomplete when the output limit cut the answer', () => {
    const encoder = new ResponsesStreamEncoder('gpt-x', {});
    const events = parseEvents(encoder.chunks([chunk({ content: 'Once' }), chunk({}, 'length')], undefined, 'f') + encoder.end(USAGE, 'f'));
    expect(events.at(-2)).toMatchObject({ type: 'response.output_item.done', item: { type: 'message', status: 'incomplete' } });
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });

  it('fails mid-stream with an error event and response.failed', () => {
    const encoder = new ResponsesStreamEncoder('gpt-x', {});
    const events = parseEvents(
      encoder.chunks([chunk({ content: 'Once' })], undefined, 'f') +
        encoder.error({ message: 'the upstream answer broke off', type: 'server_error', code: 'upstream_unreachable' }),
    );
    expect(events.slice(-2)).toEqual([
      { type: 'error', sequence_number: 5, code: 'upstream_unreachable', message: 'the upstream answer broke off', param: null },
      expect.objectContaining({
        type: 'response.failed',
        sequence_number: 6,
        response: expect.objectContaining({ status: 'failed', error: { code: 'server_error', message: 'the upstream answer broke off' } }),
      }),
    ]);
  });
});

describe('the usage of a passed-through answer', () => {
  it('reads a stream split at every byte: the final usage, the text; passes the bytes unchanged', () => {
    for (let split = 1; split < STREAM.length; split += 1) {
      const watcher = openaiResponses.watchStream(false);
      const passed = Buffer.concat(
        [watcher.pushBytes(STREAM.subarray(0, split)), watcher.pushBytes(STREAM.subarray(split))].map((part) => Buffer.from(part)),
      );
      expect(watcher.flush()).toBe('');
      expect(passed.equals(STREAM)).toBe(true);
      expect(watcher.reportedUsage()).toEqual({ promptTokens: 37, completionTokens: 12, cachedPromptTokens: 16 });
      expect(watcher.streamedText()).toBe('Bonjour! Ça va\u00a0bien? 🌤');
    }
  });

  it('counts the text of a stream cut before its end, and reports no usage', () => {
    const cut = STREAM.subarray(0, STREAM.indexOf('response.output_text.done'));
    const watcher = openaiResponses.watchStream(false);
    watcher.pushBytes(cut);
    watcher.flush();
    expect(watcher.reportedUsage()).toBeUndefined();
    expect(watcher.streamedText()).toBe('Bonjour! Ça va\u00a0bien? 🌤');
  });

  it("reads a whole Response's usage from its bytes, and its text", () => {
    const body = {
      id: 'resp_1',
      object: 'response',
      error: null,
      output: [
        { type: 'message', content: [{ type: 'output_text', text: 'Hi "usage"' }] },
        { type: 'function_call', arguments: '{"a":1}' },
      ],
      usage: RESPONSES_USAGE,
    };
    const bytes = Buffer.from(JSON.stringify(body));
    expect(openaiResponses.jsonUsage({ bytes, value: body })).toEqual({ promptTokens: 30, completionTokens: 12, cachedPromptTokens: 10 });
    expect(openaiResponses.jsonUsage({ bytes: Buffer.from('{"usage":null}'), value: { usage: null } })).toBeUndefined();
    expect(openaiResponses.answerText(body)).toBe('Hi "usage"{"a":1}');
  });
});
