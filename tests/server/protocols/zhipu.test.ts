// Zhipu: the contract over both protocols' fixtures, plus the particulars: the
// v3 JWT, v3's quoted content, no fake "Okay" turn, errors surfaced, codes
// classified.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { zhipuAdaptor, zhipuJwt, unquoteV3 } from '../../../server/protocols/upstream/zhipu';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest } from '../../../server/protocols/types';
import { callFor, decodeStream, describeAdaptor } from './contract';

describeAdaptor('zhipu', zhipuAdaptor);
describeAdaptor('zhipu-v3', zhipuAdaptor);

const v4: ChannelConfig = { type: 16, key: 'abc123.s3cr3t', baseUrl: '', other: '' };
const v3: ChannelConfig = { ...v4, other: 'v3' };

const request: ChatRequest = {
  model: 'chatglm_turbo',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'How are ' },
        { type: 'text', text: 'you?' },
      ],
    },
  ],
  temperature: 0,
  top_p: 0.5,
};

describe('Zhipu v3 (signed JWT)', () => {
  it('signs an HS256 JWT with sign_type SIGN and millisecond times from call.now', () => {
    const token = zhipuJwt('abc123.s3cr3t', 1_700_000_000)!;
    const [head, claims, signature] = token.split('.');
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT', sign_type: 'SIGN' });
    const payload = JSON.parse(Buffer.from(claims, 'base64url').toString()) as { api_key: string; exp: number; timestamp: number };
    expect(payload.api_key).toBe('abc123');
    expect(payload.timestamp).toBe(1_700_000_000_000);
    expect(payload.exp).toBeGreaterThan(payload.timestamp);
    expect(createHmac('sha256', 's3cr3t').update(`${head}.${claims}`).digest('base64url')).toBe(signature);
  });

  it('targets the per-model endpoints with the bare JWT (no Bearer), sse-invoke when streaming', () => {
    const plain = zhipuAdaptor.target(v3, callFor('chat', 'chatglm_turbo', false));
    const streamed = zhipuAdaptor.target({ ...v3, baseUrl: 'http://127.0.0.1:9/api/paas/v4/' }, callFor('chat', 'chatglm_turbo', true));
    if (isUpstreamFailure(plain) || isUpstreamFailure(streamed)) throw new Error('no target');
    expect(plain.url).toBe('https://open.bigmodel.cn/api/paas/v3/model-api/chatglm_turbo/invoke');
    expect(plain.headers.Authorization).toBe(zhipuJwt('abc123.s3cr3t', 1_700_000_000));
    expect(streamed.url).toBe('http://127.0.0.1:9/api/paas/v3/model-api/chatglm_turbo/sse-invoke');
  });

  it('refuses a key that is not <id>.<secret> as a dead key', () => {
    const target = zhipuAdaptor.target({ ...v3, key: 'no-dot-here' }, callFor('chat', 'chatglm_turbo', false));
    expect(isUpstreamFailure(target) && target.deadKey).toBe(true);
  });

  it('keeps a system prompt as a system turn: no fake user turn answered "Okay"', () => {
    const call = { ...callFor('chat', 'chatglm_turbo', false), channel: v3 };
    const body = JSON.parse(zhipuAdaptor.encodeChat(request, call)) as {
      prompt: Array<{ role: string; content: string }>;
      temperature: number;
      top_p: number;
    };
    expect(body.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'How are you?' },
    ]);
    expect(JSON.stringify(body)).not.toMatch(/Okay/);
    // a zero temperature is sent, not dropped
    expect(body.temperature).toBe(0);
    expect(body.top_p).toBe(0.5);
  });

  it('undoes the JSON quoting only when the whole content is one quoted string', () => {
    expect(unquoteV3('"Line one\\nLine \\"two\\""')).toBe('Line one\nLine "two"');
    expect(unquoteV3('He said "hi"')).toBe('He said "hi"');
    expect(unquoteV3('"a" and "b"')).toBe('"a" and "b"');
    expect(unquoteV3('"')).toBe('"');
  });

  it('surfaces an error or interrupted event in the stream', () => {
    for (const [event, filtered] of [
      ['error', false],
      ['interrupted', true],
    ] as const) {
      const decoder = zhipuAdaptor.decodeChatStream(callFor('chat', 'chatglm_turbo', true));
      decoder.push(`event:add\nid:1\ndata:Hel\n\nevent:${event}\nid:1\ndata:something went wrong\n\n`);
      decoder.end();
      const failure = decoder.failure();
      expect(failure?.message).toBe('something went wrong');
      expect(failure?.type).toBe(filtered ? 'content_filter' : 'zhipu_error');
      expect(failure?.retryable).toBe(!filtered);
      expect(decoder.done()).toBe(false);
    }
  });

  it('reads a JSON refusal sent in place of a stream', () => {
    const decoder = zhipuAdaptor.decodeChatStream(callFor('chat', 'chatglm_turbo', true));
    const body = Buffer.from('{"code":1113,"msg":"您的账户已欠费，请充值后重试","success":false}');
    expect(decoder.push(body.subarray(0, 10))).toEqual([]);
    decoder.push(body.subarray(10));
    decoder.end();
    expect(decoder.failure()).toMatchObject({ deadKey: true, code: 1113 });
  });
});

describe('Zhipu v4 (OpenAI-shaped)', () => {
  it('sends the OpenAI request with the upstream model and the key as Bearer', () => {
    const call = callFor('chat', 'glm-4-flash', false);
    const target = zhipuAdaptor.target({ ...v4, baseUrl: 'https://mirror.example/' }, call);
    if (isUpstreamFailure(target)) throw new Error(target.message);
    expect(target.url).toBe('https://mirror.example/api/paas/v4/chat/completions');
    expect(target.headers.Authorization).toBe('Bearer abc123.s3cr3t');
    const body = JSON.parse(zhipuAdaptor.encodeChat({ ...request, model: 'glm-4' }, call)) as ChatRequest;
    expect(body.model).toBe('glm-4-flash');
    expect(body.messages).toEqual(request.messages);
    expect(body.temperature).toBe(0);
    const limited = JSON.parse(zhipuAdaptor.encodeChat({ ...request, max_completion_tokens: 64 }, call)) as ChatRequest;
    expect(limited.max_tokens).toBe(64);
    expect(limited.max_completion_tokens).toBeUndefined();
  });

  it('classifies Zhipu codes: dead keys, rate limits, content filter, bad requests', () => {
    const failure = (status: number, code: string) =>
      zhipuAdaptor.failure(status, JSON.stringify({ error: { code, message: `code ${code}` } }));
    expect(failure(401, '1000')).toMatchObject({ deadKey: true, retryable: true, status: 401 });
    expect(failure(429, '1113')).toMatchObject({ deadKey: true, retryable: true, status: 429, code: '1113' });
    expect(failure(403, '1112')).toMatchObject({ deadKey: true });
    expect(failure(401, '1003')).toMatchObject({ deadKey: false, retryable: true });
    for (const code of ['1302', '1303', '1305']) expect(failure(429, code)).toMatchObject({ deadKey: false, retryable: true, status: 429 });
    expect(failure(400, '1301')).toMatchObject({ deadKey: false, retryable: false, type: 'content_filter' });
    for (const code of ['1210', '1213', '1214']) expect(failure(400, code)).toMatchObject({ deadKey: false, retryable: false });
    expect(failure(500, '500')).toMatchObject({ deadKey: false, retryable: true });
    // not JSON at all: the body's own words, not a made-up message
    expect(zhipuAdaptor.failure(502, 'Bad Gateway')).toMatchObject({ status: 502, message: 'Bad Gateway', retryable: true });
  });

  it('surfaces an error event inside the stream', () => {
    const decoder = zhipuAdaptor.decodeChatStream(callFor('chat', 'glm-4-flash', true));
    const chunks = decoder.push(
      'data: {"id":"1","created":1,"model":"glm-4-flash","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}\n\ndata: {"error":{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容"}}\n\n',
    );
    expect(chunks).toHaveLength(1);
    expect(decoder.failure()).toMatchObject({ type: 'content_filter', retryable: false, code: '1301' });
  });

  it('maps finish_reason "sensitive" to content_filter, and keeps ids, model and indexes', () => {
    const call = callFor('chat', 'glm-4-flash', true);
    const wire = Buffer.from(
      'data: {"id":"abc","created":1732341031,"model":"glm-4-plus","choices":[{"index":0,"delta":{"role":"assistant","content":"Part"}}]}\n\n' +
        'data: {"id":"abc","created":1732341031,"model":"glm-4-plus","choices":[{"index":0,"finish_reason":"sensitive","delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}}\n\ndata: [DONE]\n\n',
    );
    const { chunks, usage, done } = decodeStream(zhipuAdaptor, call, wire);
    expect(done).toBe(true);
    expect(chunks.map((chunk) => [chunk.id, chunk.model, chunk.created])).toEqual([
      ['abc', 'glm-4-plus', 1732341031],
      ['abc', 'glm-4-plus', 1732341031],
    ]);
    expect(chunks[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: 'Part' }, finish_reason: null });
    expect(chunks[1].choices[0].finish_reason).toBe('content_filter');
    expect(usage).toEqual({ promptTokens: 3, completionTokens: 1, cachedPromptTokens: 2 });
  });

  it('keeps choices apart in a stream of several: role on each first delta, one finish each', () => {
    const chunk = (choices: unknown[]) => `data: ${JSON.stringify({ id: 'n2', created: 9, model: 'glm-4-flash', choices })}\n\n`;
    const wire = Buffer.from(
      chunk([{ index: 0, delta: { role: 'assistant', content: 'A' } }]) +
        chunk([{ index: 1, delta: { role: 'assistant', content: 'B' } }]) +
        chunk([{ index: 1, finish_reason: 'length', delta: { content: '' } }]) +
        chunk([{ index: 0, finish_reason: 'stop', delta: { content: '!' } }]) +
        'data: [DONE]\n\n',
    );
    const { chunks } = decodeStream(zhipuAdaptor, callFor('chat', 'glm-4-flash', true), wire);
    expect(chunks.map((item) => item.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'A' }, finish_reason: null },
      { index: 1, delta: { role: 'assistant', content: 'B' }, finish_reason: null },
      { index: 1, delta: {}, finish_reason: 'length' },
      { index: 0, delta: { content: '!' }, finish_reason: 'stop' },
    ]);
  });

  it('answers reasoning content and Zhipu-only fields without tripping', () => {
    const decoded = zhipuAdaptor.decodeChat(
      JSON.stringify({
        id: 'x',
        created: 5,
        model: 'glm-4.5',
        request_id: 'x',
        web_search: [{ title: 'a', link: 'https://a' }],
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Yes', reasoning_content: 'Because.' } }],
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
      }),
      callFor('chat', 'glm-4.5', false),
    );
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].message).toEqual({ role: 'assistant', content: 'Yes', reasoning_content: 'Because.' });
    expect(decoded.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  });

  it('sends embeddings to the v4 endpoint even on a v3 channel', () => {
    const target = zhipuAdaptor.target(v3, callFor('embeddings', 'embedding-3', false));
    if (isUpstreamFailure(target)) throw new Error(target.message);
    expect(target.url).toBe('https://open.bigmodel.cn/api/paas/v4/embeddings');
    expect(target.headers.Authorization).toBe('Bearer abc123.s3cr3t');
  });
});
