import { describe, expect, it } from 'vitest';
import { cozeAdaptor, botIdOf } from '../../../server/protocols/upstream/coze';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('coze', cozeAdaptor);

const channel: ChannelConfig = { type: 34, key: 'pat_test', baseUrl: '', other: '' };
const MODEL = 'bot-7379462189365198898';
const encode = (request: Partial<ChatRequest>, stream = false) =>
  JSON.parse(
    cozeAdaptor.encodeChat(
      { model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...request },
      callFor('chat', MODEL, stream, channel),
    ),
  ) as Record<string, unknown> & {
    additional_messages: Array<Record<string, unknown>>;
  };
const sse = (events: Array<[string, unknown]>) =>
  events.map(([name, data]) => `event:${name}\ndata:${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');

describe('coze adaptor particulars', () => {
  it('is the registered adaptor for the coze protocol', () => {
    expect(UPSTREAM_ADAPTORS.coze).toBe(cozeAdaptor);
  });

  it('reads the bot id from the model name as one-api names it', () => {
    expect(botIdOf('bot-123')).toBe('123');
    expect(botIdOf('456')).toBe('456');
    expect(encode({}).bot_id).toBe('7379462189365198898');
  });

  it('honours the channel base URL (api.coze.cn) and always streams, a whole answer included', () => {
    const target = cozeAdaptor.target({ ...channel, baseUrl: 'https://api.coze.cn/' }, callFor('chat', MODEL, false)) as HttpTarget;
    expect(target.url).toBe('https://api.coze.cn/v3/chat');
    expect(target.headers.Authorization).toBe('Bearer pat_test');
    expect(encode({}, false).stream).toBe(true);
    expect(encode({}, true).stream).toBe(true);
  });

  it('refuses a model name without a bot id', () => {
    const refused = cozeAdaptor.target(channel, callFor('chat', 'bot-', false));
    expect(isUpstreamFailure(refused) && refused.status).toBe(400);
  });

  it('names a default user when the client names none', () => {
    expect(encode({}).user_id).toBe('switchboard');
    expect(encode({ user: 'alice' }).user_id).toBe('alice');
  });

  it('sends images as an object_string of text and image items', () => {
    const body = encode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    });
    expect(body.additional_messages).toEqual([
      {
        role: 'user',
        type: 'question',
        content_type: 'object_string',
        content: JSON.stringify([
          { type: 'text', text: 'what is this?' },
          { type: 'image', file_url: 'https://example.com/cat.png' },
        ]),
      },
    ]);
  });

  it('refuses function tools and tool turns, which a bot cannot take', () => {
    expect(() => encode({ tools: [{ type: 'function', function: { name: 'f' } }] })).toThrow(/function tools/);
    expect(() => encode({ messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }] })).toThrow(/tool results/);
  });

  it('reads a failed chat from its last_error, and a dead token from its code', () => {
    const call = callFor('chat', MODEL, true, channel);
    const decoder = cozeAdaptor.decodeChatStream(call);
    decoder.push(
      sse([
        ['conversation.chat.failed', { id: '1', status: 'failed', last_error: { code: 4028, msg: 'The free quota has been used up' } }],
      ]),
    );
    decoder.end();
    expect(decoder.failure()).toMatchObject({ status: 402, deadKey: true, message: 'The free quota has been used up' });
    const whole = cozeAdaptor.decodeChat(
      JSON.stringify({ code: 4100, msg: 'authentication is invalid' }),
      callFor('chat', MODEL, false, channel),
    );
    expect(whole).toMatchObject({ status: 401, deadKey: true, retryable: true });
  });

  it('reads an error event and a bot waiting on a client plugin as failures', () => {
    const errorDecoder = cozeAdaptor.decodeChatStream(callFor('chat', MODEL, true, channel));
    errorDecoder.push(sse([['error', { code: 4013, msg: 'rate limited' }]]));
    expect(errorDecoder.failure()).toMatchObject({ status: 429, retryable: true });
    const actionDecoder = cozeAdaptor.decodeChatStream(callFor('chat', MODEL, true, channel));
    actionDecoder.push(sse([['conversation.chat.requires_action', { id: '1', status: 'requires_action' }]]));
    expect(actionDecoder.failure()).toMatchObject({ status: 400, retryable: false });
  });

  it('a stream that ends before the chat completed is a failure, not a free answer', () => {
    const decoder = cozeAdaptor.decodeChatStream(callFor('chat', MODEL, true, channel));
    const chunks = decoder.push(
      sse([
        ['conversation.message.delta', { type: 'answer', content: 'half' }],
        ['done', '"[DONE]"'],
      ]),
    );
    expect(chunks).toHaveLength(1);
    expect(decoder.failure()).toMatchObject({ status: 502, retryable: true });
    const cut = cozeAdaptor.decodeChat(
      sse([['conversation.message.delta', { type: 'answer', content: 'half' }]]),
      callFor('chat', MODEL, false, channel),
    );
    expect(isUpstreamFailure(cut) && cut.status).toBe(502);
  });

  it('carries reasoning deltas apart from the answer', () => {
    const decoder = cozeAdaptor.decodeChatStream(callFor('chat', MODEL, true, channel));
    const chunks = decoder.push(sse([['conversation.message.delta', { type: 'answer', content: '', reasoning_content: 'thinking' }]]));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', reasoning_content: 'thinking' });
  });
});
