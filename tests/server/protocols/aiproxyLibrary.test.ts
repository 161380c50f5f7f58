import { describe, expect, it } from 'vitest';
import { aiProxyLibraryAdaptor, documentsMarkdown } from '../../../server/protocols/upstream/aiproxyLibrary';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('aiproxy-library', aiProxyLibraryAdaptor);

const channel: ChannelConfig = { type: 21, key: 'ap-test', baseUrl: '', other: 'lib-1' };
const encode = (request: Partial<ChatRequest>, stream = false) =>
  JSON.parse(
    aiProxyLibraryAdaptor.encodeChat(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'q' }], ...request },
      callFor('chat', 'gpt-4o-mini', stream, channel),
    ),
  ) as Record<string, unknown>;
const sse = (events: unknown[]) => events.map((event) => `data:${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('');

describe('AI Proxy library adaptor particulars', () => {
  it('is the registered adaptor for the aiproxy-library protocol', () => {
    expect(UPSTREAM_ADAPTORS['aiproxy-library']).toBe(aiProxyLibraryAdaptor);
  });

  it('asks the library the channel names, and refuses a channel that names none', () => {
    const target = aiProxyLibraryAdaptor.target(
      { ...channel, baseUrl: 'http://127.0.0.1:9/' },
      callFor('chat', 'gpt-4o-mini', false),
    ) as HttpTarget;
    expect(target.url).toBe('http://127.0.0.1:9/api/library/ask');
    expect(
      encode(
        {
          messages: [
            { role: 'user', content: 'old' },
            { role: 'assistant', content: 'a' },
            { role: 'user', content: 'new' },
          ],
        },
        true,
      ),
    ).toEqual({
      model: 'gpt-4o-mini',
      query: 'new',
      libraryId: 'lib-1',
      stream: true,
    });
    const refused = aiProxyLibraryAdaptor.target({ ...channel, other: ' ' }, callFor('chat', 'gpt-4o-mini', false));
    expect(isUpstreamFailure(refused) && refused.code).toBe('channel_library_missing');
  });

  it('writes the documents under the answer as one-api does', () => {
    expect(documentsMarkdown([])).toBe('');
    expect(documentsMarkdown([{ title: 'A', url: 'https://a' }])).toBe('\n\n参考文档：\n1. [A](https://a)\n');
  });

  it('streams the pieces, then the documents with the finish; reports no usage, so the relay counts', () => {
    const decoder = aiProxyLibraryAdaptor.decodeChatStream(callFor('chat', 'gpt-4o-mini', true, channel));
    const chunks = [
      ...decoder.push(
        sse([
          { content: 'Open ', model: 'gpt-4o-mini' },
          { content: 'billing.', documents: [{ title: 'Billing', url: 'https://b' }] },
        ]),
      ),
      ...decoder.push(sse([{ content: '', finish: true }])),
      ...decoder.end(),
    ];
    expect(chunks.map((chunk) => chunk.choices[0].delta.content)).toEqual([
      'Open ',
      'billing.',
      '\n\n参考文档：\n1. [Billing](https://b)\n',
    ]);
    expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual([null, null, 'stop']);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(decoder.done()).toBe(true);
    expect(decoder.usage()).toBeUndefined();
  });

  it('a stream that just ends is finished there; a refusal in place of a stream is a failure', () => {
    const ended = aiProxyLibraryAdaptor.decodeChatStream(callFor('chat', 'gpt-4o-mini', true, channel));
    ended.push(sse([{ content: 'partial' }]));
    expect(ended.end().at(-1)!.choices[0].finish_reason).toBe('stop');
    const refused = aiProxyLibraryAdaptor.decodeChatStream(callFor('chat', 'gpt-4o-mini', true, channel));
    refused.push(JSON.stringify({ success: false, errCode: 1003, errMsg: 'library not found' }));
    expect(refused.end()).toEqual([]);
    expect(refused.failure()).toMatchObject({ message: 'library not found', deadKey: false, status: 400 });
  });

  it('reads a refusal inside a 200 as a failure, and a spent balance as a dead key', () => {
    const call = callFor('chat', 'gpt-4o-mini', false, channel);
    expect(
      aiProxyLibraryAdaptor.decodeChat(JSON.stringify({ success: false, errCode: 1003, errMsg: 'library not found' }), call),
    ).toMatchObject({ status: 400, deadKey: false });
    expect(aiProxyLibraryAdaptor.decodeChat(JSON.stringify({ success: false, errCode: 2001, errMsg: '余额不足' }), call)).toMatchObject({
      deadKey: true,
      retryable: true,
    });
  });

  it('refuses tools, tool results and a question without text', () => {
    expect(() => encode({ tools: [{ type: 'function', function: { name: 'f' } }] })).toThrow(/function tools/);
    expect(() => encode({ messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }] })).toThrow(/tool results/);
    expect(() => encode({ messages: [{ role: 'system', content: 'x' }] })).toThrow(/no text/);
  });
});
