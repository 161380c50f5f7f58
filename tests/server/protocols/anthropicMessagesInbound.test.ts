// The Anthropic Messages inbound codec on its own: the request in the chat
// form, the errors by status, the usage of passed-through answers (byte splits
// anywhere), and chat chunks written back as Anthropic's event sequence.
import { describe, expect, it } from 'vitest';
import { anthropicMessages } from '../../../server/protocols/inbound/anthropicMessages';
import { anthropicErrorType, encodeResponse, MessagesStreamEncoder } from '../../../server/protocols/inbound/anthropicMessagesAnswer';
import { chatRequestOf } from '../../../server/protocols/inbound/anthropicMessagesRequest';
import type { ChatChunk, ChatResponse } from '../../../server/protocols/types';

describe('a Messages request in the chat form', () => {
  it('maps system blocks, images, tool history, tool choice, sampling, stops and the user', () => {
    const chat = chatRequestOf({
      model: 'claude-x',
      max_tokens: 64,
      stream: true,
      system: [
        { type: 'text', text: 'One.' },
        { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'f', input: { x: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'broken', is_error: true }] },
      ],
      tools: [{ name: 'f', input_schema: { type: 'object', properties: { x: { type: 'number' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      temperature: 0.5,
      top_p: 0.8,
      top_k: 7,
      stop_sequences: ['STOP'],
      metadata: { user_id: 'abc' },
    });
    expect(chat).toEqual({
      model: 'claude-x',
      stream: true,
      max_tokens: 64,
      messages: [
        // a block marked for the prompt cache keeps its mark: the system prompt stays in blocks
        {
          role: 'system',
          content: [
            { type: 'text', text: 'One.' },
            { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_a', content: 'Error: broken' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: { type: 'number' } } } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      temperature: 0.5,
      top_p: 0.8,
      top_k: 7,
      stop: ['STOP'],
      user: 'abc',
    });
    expect(
      chatRequestOf({ model: 'm', max_tokens: 1, messages: [], tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'none' } })
        .tool_choice,
    ).toBe('none');
    expect(
      chatRequestOf({ model: 'm', max_tokens: 1, messages: [], tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'auto' } })
        .tool_choice,
    ).toBe('auto');
  });

  it('carries extended thinking to other vendors as reasoning_effort, by budget', () => {
    const effort = (thinking: unknown) => chatRequestOf({ model: 'm', max_tokens: 30000, messages: [], thinking }).reasoning_effort;
    expect(effort({ type: 'enabled', budget_tokens: 1024 })).toBe('low');
    expect(effort({ type: 'enabled', budget_tokens: 4000 })).toBe('medium');
    expect(effort({ type: 'enabled', budget_tokens: 8192 })).toBe('medium');
    expect(effort({ type: 'enabled', budget_tokens: 16000 })).toBe('high');
    expect(effort({ type: 'disabled' })).toBeUndefined();
    expect(effort(undefined)).toBeUndefined();
    expect(
      chatRequestOf({ model: 'm', max_tokens: 1, messages: [], thinking: { type: 'enabled', budget_tokens: 2000 } }),
    ).not.toHaveProperty('thinking');
  });

  it('joins an unmarked system prompt into one string', () => {
    const chat = chatRequestOf({
      model: 'm',
      max_tokens: 1,
      system: [
        { type: 'text', text: 'One.' },
        { type: 'text', text: 'Two.' },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(chat.messages[0]).toEqual({ role: 'system', content: 'One.\n\nTwo.' });
  });

  it('requires messages and a positive integer max_tokens', () => {
    expect(anthropicMessages.check('chat', { model: 'm', messages: [] })).toEqual({
      message: 'max_tokens: Field required',
      code: 'invalid_request_error',
    });
    expect(anthropicMessages.check('chat', { model: 'm', max_tokens: 0, messages: [] })?.message).toMatch(/max_tokens/);
    expect(anthropicMessages.check('chat', { model: 'm', max_tokens: 5 })?.message).toBe('messages: Field required');
    expect(anthropicMessages.check('chat', { model: 'm', max_tokens: 5, messages: [] })).toBeUndefined();
    expect(anthropicMessages.outputLimit({ max_tokens: 300 })).toBe(300);
  });

  it('reads the key from x-api-key first, else Authorization', () => {
    expect(anthropicMessages.authorization({ 'x-api-key': 'sk-a', authorization: 'Bearer sk-b' })).toBe('Bearer sk-a');
    expect(anthropicMessages.authorization({ authorization: 'Bearer sk-b' })).toBe('Bearer sk-b');
    expect(anthropicMessages.authorization({})).toBeUndefined();
  });
});

describe('errors in Anthropic shape', () => {
  it('names the error type by status', () => {
    const types = [400, 401, 403, 404, 413, 429, 500, 502, 503, 529].map(anthropicErrorType);
    expect(types).toEqual([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'overloaded_error',
    ]);
    expect(JSON.parse(anthropicMessages.errorBody({ status: 429, message: 'slow down', type: 'x', code: null }))).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });
  });
});

describe('usage of passed-through answers', () => {
  it('reads a JSON answer: cache reads and writes are part of the prompt', () => {
    const bytes = Buffer.from(
      JSON.stringify({
        id: 'msg_1',
        content: [{ type: 'text', text: 'hi' }],
        usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
      }),
    );
    expect(anthropicMessages.jsonUsage({ bytes, value: undefined })).toEqual({
      promptTokens: 15,
      completionTokens: 4,
      cachedPromptTokens: 3,
      cacheCreationTokens: 2,
    });
  });

  it('reads a stream split at every byte: message_start and message_delta usage, the text; passes the bytes unchanged', () => {
    const events = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":12,"cache_read_input_tokens":5,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      'event: ping\ndata: {"type":"ping"}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"héllo "}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"world"}}\n\n',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join('');
    const bytes = Buffer.from(events);
    for (let cut = 0; cut <= bytes.length; cut += 7) {
      const watcher = anthropicMessages.watchStream(false);
      const out = Buffer.concat(
        [watcher.pushBytes(bytes.subarray(0, cut)), watcher.pushBytes(bytes.subarray(cut))].map((part) => Buffer.from(part)),
      );
      expect(out.equals(bytes)).toBe(true);
      expect(watcher.flush()).toBe('');
      expect(watcher.reportedUsage()).toEqual({ promptTokens: 17, completionTokens: 7, cachedPromptTokens: 5 });
      expect(watcher.streamedText()).toBe('héllo world');
    }
  });

  it('reports nothing for a stream cut before message_delta (the relay estimates)', () => {
    const watcher = anthropicMessages.watchStream(false);
    watcher.pushBytes(
      Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1}}}\n\n'),
    );
    expect(watcher.reportedUsage()).toBeUndefined();
  });
});

describe('answers written back in Anthropic shape', () => {
  const chat: ChatResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  };

  it('a whole answer: text and tool_use blocks, the stop reason, the usage', () => {
    expect(JSON.parse(encodeResponse(chat, { promptTokens: 10, completionTokens: 3, cachedPromptTokens: 4 }, 'my-model'))).toEqual({
      id: 'msg_chatcmpl1',
      type: 'message',
      role: 'assistant',
      model: 'my-model',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_call_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 6, cache_read_input_tokens: 4, cache_creation_input_tokens: 0, output_tokens: 3 },
    });
  });

  it('a stream: one block per text or tool call, deltas in between, message_delta and message_stop at the end', () => {
    const base = { id: 'chatcmpl-2', object: 'chat.completion.chunk' as const, created: 1, model: 'gpt-x' };
    const chunk = (
      delta: ChatChunk['choices'][number]['delta'],
      finish: ChatChunk['choices'][number]['finish_reason'] = null,
    ): ChatChunk => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const encoder = new MessagesStreamEncoder('my-model');
    let text = encoder.chunks(
      [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({ content: ' there' })],
      undefined,
      'fallback',
    );
    text += encoder.chunks(
      [
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
        chunk({}, 'length'),
      ],
      undefined,
      'fallback',
    );
    text += encoder.end({ promptTokens: 9, completionTokens: 5, cachedPromptTokens: 0 }, 'fallback');
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((event) => {
        const [name, data] = event.split('\n');
        const parsed = JSON.parse(data.slice('data: '.length)) as { type: string };
        expect(name).toBe(`event: ${parsed.type}`);
        return parsed;
      });
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_chatcmpl2',
          type: 'message',
          role: 'assistant',
          model: 'my-model',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' there' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_call_a', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_call_b', name: 'g', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 },
      },
      { type: 'message_stop' },
    ]);
  });
});
