import { describe, expect, it } from 'vitest';
import { baiduAdaptor, baiduEndpoint, CREDENTIAL_REJECTED } from '../../../server/protocols/upstream/baidu';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, decodeStream, describeAdaptor } from './contract';

describeAdaptor('baidu', baiduAdaptor);

const channel: ChannelConfig = { type: 15, key: 'my-ak|my-sk', baseUrl: '', other: '' };
const encode = (request: Partial<ChatRequest>, stream = false) =>
  JSON.parse(
    baiduAdaptor.encodeChat(
      { model: 'ERNIE-3.5-8K', messages: [{ role: 'user', content: 'hi' }], ...request },
      callFor('chat', 'ERNIE-3.5-8K', stream),
    ),
  ) as Record<string, unknown>;

describe('baidu adaptor particulars', () => {
  it('is the registered adaptor for the baidu protocol', () => {
    expect(UPSTREAM_ADAPTORS.baidu).toBe(baiduAdaptor);
  });

  it('describes the OAuth exchange at the channel base URL', () => {
    const request = baiduAdaptor.credential!.request({ ...channel, baseUrl: 'http://127.0.0.1:9/' });
    expect(isUpstreamFailure(request)).toBe(false);
    const target = request as HttpTarget;
    expect(target.method).toBe('POST');
    const url = new URL(target.url);
    expect(url.origin + url.pathname).toBe('http://127.0.0.1:9/oauth/2.0/token');
    expect(Object.fromEntries(url.searchParams)).toEqual({ grant_type: 'client_credentials', client_id: 'my-ak', client_secret: 'my-sk' });
    expect((baiduAdaptor.credential!.request(channel) as HttpTarget).url.startsWith('https://aip.baidubce.com/oauth/2.0/token?')).toBe(
      true,
    );
  });

  it('reads the exchanged token and its life, and keeps the secret out of the cache key', () => {
    const parsed = baiduAdaptor.credential!.parse(
      200,
      JSON.stringify({ refresh_token: 'r', expires_in: 2592000, access_token: '24.abc.2592000.1700000000.282335-1', scope: 'public' }),
    );
    expect(parsed).toEqual({ credential: '24.abc.2592000.1700000000.282335-1', expiresInSeconds: 2592000 });
    const key = baiduAdaptor.credential!.cacheKey(channel);
    expect(key).not.toContain('my-sk');
    expect(baiduAdaptor.credential!.cacheKey({ ...channel, key: 'my-ak|other-sk' })).not.toBe(key);
  });

  it('a refused exchange is a failure; invalid_client is a dead key', () => {
    const dead = baiduAdaptor.credential!.parse(401, JSON.stringify({ error: 'invalid_client', error_description: 'unknown client id' }));
    expect(isUpstreamFailure(dead) && dead.deadKey && dead.retryable).toBe(true);
    expect(isUpstreamFailure(dead) && dead.message).toContain('unknown client id');
    const other = baiduAdaptor.credential!.parse(
      400,
      JSON.stringify({ error: 'invalid_request', error_description: 'missing grant_type' }),
    );
    expect(isUpstreamFailure(other) && !other.deadKey).toBe(true);
    expect(isUpstreamFailure(baiduAdaptor.credential!.parse(200, '{}'))).toBe(true);
  });

  it('a malformed key fails clearly before any request, without calling the key dead', () => {
    for (const key of ['just-one-part', 'a|b|c', '|sk', 'ak|']) {
      const failure = baiduAdaptor.credential!.request({ ...channel, key });
      expect(isUpstreamFailure(failure)).toBe(true);
      if (!isUpstreamFailure(failure)) return;
      expect(failure.message).toMatch(/API Key.*Secret Key/);
      expect(failure.deadKey).toBe(false);
      expect(failure.retryable).toBe(true);
    }
  });

  it('a rejected or expired access token asks the relay to exchange the key again (not a dead key)', () => {
    for (const code of [110, 111]) {
      const failure = baiduAdaptor.decodeChat(
        JSON.stringify({ error_code: code, error_msg: 'Access token invalid or no longer valid' }),
        callFor('chat', 'ERNIE-3.5-8K', false),
      );
      expect(isUpstreamFailure(failure)).toBe(true);
      if (!isUpstreamFailure(failure)) return;
      expect(failure.code).toBe(CREDENTIAL_REJECTED);
      expect(failure.deadKey).toBe(false);
      expect(failure.retryable).toBe(true);
    }
  });

  it('classifies quota and request errors (errors are surfaced, never swallowed)', () => {
    const of = (code: number) => baiduAdaptor.failure(200, JSON.stringify({ error_code: code, error_msg: `message ${code}` }));
    expect(of(19)).toMatchObject({ deadKey: true, retryable: true, message: 'message 19' });
    expect(of(100)).toMatchObject({ code: CREDENTIAL_REJECTED, deadKey: false, retryable: true });
    expect(of(3)).toMatchObject({ status: 400, retryable: false });
    expect(of(18)).toMatchObject({ status: 429, deadKey: false, retryable: true });
    expect(of(17)).toMatchObject({ status: 429, deadKey: false, retryable: true });
    expect(of(15)).toMatchObject({ deadKey: true });
    expect(of(336003)).toMatchObject({ status: 400, deadKey: false, retryable: false, code: 336003 });
    expect(of(336100)).toMatchObject({ deadKey: false, retryable: true });
    expect(baiduAdaptor.failure(502, '<html>bad gateway</html>')).toMatchObject({ status: 502, retryable: true });
    expect(baiduAdaptor.failure(502, '<html>bad gateway</html>').message).toContain('bad gateway');
  });

  it('a stream refused with a bare JSON body reports the failure', () => {
    const call = callFor('chat', 'ERNIE-3.5-8K', true);
    const decoder = baiduAdaptor.decodeChatStream(call);
    const body = Buffer.from(JSON.stringify({ error_code: 336003, error_msg: 'messages 参数错误' }));
    expect(decoder.push(body.subarray(0, 20))).toEqual([]);
    expect(decoder.push(body.subarray(20))).toEqual([]);
    expect(decoder.end()).toEqual([]);
    expect(decoder.failure()).toMatchObject({ status: 400, code: 336003, message: 'messages 参数错误' });
    expect(decoder.done()).toBe(false);
  });

  it('a system prompt goes to the system field, never as a fake user turn with "Okay"', () => {
    const body = encode({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'No lists.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(body.system).toBe('Be brief.\n\nNo lists.');
    expect(body.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(JSON.stringify(body)).not.toMatch(/Okay/);
  });

  it('passes the sampling parameters, not dropping them', () => {
    const body = encode(
      {
        temperature: 0,
        top_p: 0.5,
        presence_penalty: 2,
        stop: ['END'],
        max_completion_tokens: 100,
        user: 'u1',
        response_format: { type: 'json_object' },
      },
      true,
    );
    expect(body).toMatchObject({
      temperature: 0.01,
      top_p: 0.5,
      penalty_score: 2,
      stop: ['END'],
      max_output_tokens: 100,
      user_id: 'u1',
      response_format: 'json_object',
      stream: true,
    });
    expect(encode({ temperature: 1.6 }).temperature).toBe(1);
    expect(encode({ frequency_penalty: -1 })).not.toHaveProperty('penalty_score');
    expect(encode({ disable_search: true, enable_citation: false })).toMatchObject({ disable_search: true, enable_citation: false });
    expect(encode({})).not.toHaveProperty('disable_search');
  });

  it('joins consecutive turns of one side so the roles alternate, and sends tool results as function turns', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'tool', tool_call_id: 'c2', content: 'two' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'a\n\nb' },
      { role: 'assistant', content: '', function_call: { name: 'f', arguments: '{"x":1}' } },
      { role: 'function', name: 'f', content: 'one' },
      { role: 'assistant', content: '', function_call: { name: 'g', arguments: '{}' } },
      { role: 'function', name: 'g', content: 'two' },
    ]);
  });

  it('maps every model to its endpoint; an unknown model goes to its own lowercased name', () => {
    const table: Record<string, string> = {
      'ERNIE-4.0-8K': 'completions_pro',
      'ERNIE-3.5-8K': 'completions',
      'ERNIE-Bot': 'completions',
      'ERNIE-Bot-turbo': 'eb-instant',
      'ERNIE-Speed-8K': 'ernie_speed',
      'ERNIE-Lite-8K': 'ernie-lite-8k',
      'ERNIE-Tiny-8K': 'ernie-tiny-8k',
      'ERNIE-4.0-Turbo-8K': 'ernie-4.0-turbo-8k',
      'ERNIE-Speed-128K': 'ernie-speed-128k',
      'Some-New-Model': 'some-new-model',
      '../oauth': '..%2Foauth',
    };
    for (const [model, endpoint] of Object.entries(table)) {
      expect(baiduEndpoint(model, 'chat')).toBe(endpoint);
      const target = baiduAdaptor.target(channel, { ...callFor('chat', model, false), credential: 't' }) as HttpTarget;
      expect(target.url).toBe(`https://aip.baidubce.com/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/${endpoint}?access_token=t`);
    }
    expect(baiduEndpoint('bge-large-zh', 'embeddings')).toBe('bge_large_zh');
    expect(baiduEndpoint('tao-8k', 'embeddings')).toBe('tao_8k');
  });

  it('refuses to target without an access token', () => {
    const target = baiduAdaptor.target(channel, { ...callFor('chat', 'ERNIE-3.5-8K', false), credential: undefined });
    expect(isUpstreamFailure(target)).toBe(true);
  });

  it('stream chunks name the requested model and carry the role once and null finish reasons until the end', () => {
    const wire = Buffer.from(
      'data: {"id":"as-1","object":"chat.completion","created":1709089502,"sentence_id":0,"is_end":false,"result":"Hel","finish_reason":"normal","usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}\n\n' +
        'data: {"id":"as-1","object":"chat.completion","created":1709089502,"sentence_id":1,"is_end":true,"result":"lo","finish_reason":"length","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n',
    );
    const { chunks, usage } = decodeStream(baiduAdaptor, callFor('chat', 'ERNIE-Speed-8K', true), wire);
    expect(chunks.map((chunk) => chunk.model)).toEqual(['ERNIE-Speed-8K', 'ERNIE-Speed-8K']);
    expect(chunks.map((chunk) => chunk.id)).toEqual(['as-1', 'as-1']);
    expect(chunks.map((chunk) => chunk.choices[0].delta)).toEqual([{ role: 'assistant', content: 'Hel' }, { content: 'lo' }]);
    expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual([null, 'length']);
    expect(usage).toEqual({ promptTokens: 3, completionTokens: 2, cachedPromptTokens: 0 });
  });

  it('a whole answer keeps Baidu id and created, and the model asked for', () => {
    const decoded = baiduAdaptor.decodeChat(
      JSON.stringify({
        id: 'as-9',
        created: 1680167072,
        result: 'x',
        need_clear_history: true,
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
      callFor('chat', 'ERNIE-Lite-8K', false),
    );
    expect(decoded).toMatchObject({
      id: 'as-9',
      created: 1680167072,
      model: 'ERNIE-Lite-8K',
      choices: [{ index: 0, finish_reason: 'content_filter' }],
    });
  });

  it('embeddings take a single string as a one-element list', () => {
    expect(
      JSON.parse(baiduAdaptor.encodeEmbeddings!({ model: 'Embedding-V1', input: 'hello' }, callFor('embeddings', 'Embedding-V1', false))),
    ).toEqual({ input: ['hello'] });
    const failure = baiduAdaptor.decodeEmbeddings!(
      JSON.stringify({ error_code: 336003, error_msg: 'input empty' }),
      callFor('embeddings', 'Embedding-V1', false),
    );
    expect(isUpstreamFailure(failure) && failure.message).toBe('input empty');
  });
});

describe('baidu tool results out of order', () => {
  it('pairs each result with its own call', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: 'checking',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"y":2}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c2', content: 'two' },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'checking', function_call: { name: 'g', arguments: '{"y":2}' } },
      { role: 'function', name: 'g', content: 'two' },
      { role: 'assistant', content: '', function_call: { name: 'f', arguments: '{}' } },
      { role: 'function', name: 'f', content: 'one' },
      { role: 'user', content: 'thanks' },
    ]);
  });
});

describe('baidu stream usage', () => {
  it('a stream cut before is_end reports no usage (the relay estimates), not the prompt alone', () => {
    const decoder = baiduAdaptor.decodeChatStream(callFor('chat', 'ERNIE-3.5-8K', true));
    const chunks = decoder.push(
      'data: {"id":"as-1","created":1709089502,"sentence_id":0,"is_end":false,"result":"Hel","usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}\n\n',
    );
    expect(chunks).toHaveLength(1);
    decoder.end();
    expect(decoder.done()).toBe(false);
    expect(decoder.usage()).toBeUndefined();
  });
});
