// iFlytek Spark: the contract over the recorded frames, plus the particulars:
// the URL signature against a worked example, the version table, top_k never
// n, no fake "Okay" turn, frame errors surfaced and classified.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SPARK_VERSIONS, signSparkUrl, sparkVersion, xunfeiAdaptor } from '../../../server/protocols/upstream/xunfei';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('xunfei', xunfeiAdaptor);

const APP_ID = 'a1b2c3d4';
const API_SECRET = 'MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi';
const API_KEY = 'addd2272b6d8b7c8abdd79531420ca3b';
const channel: ChannelConfig = { type: 18, key: `${APP_ID}|${API_SECRET}|${API_KEY}`, baseUrl: '', other: 'v3.5' };

describe('Spark URL signing', () => {
  it('matches a worked example of the documented algorithm', () => {
    // 1700000000 is Tue, 14 Nov 2023 22:13:20 GMT
    const date = 'Tue, 14 Nov 2023 22:13:20 GMT';
    const origin = 'host: spark-api.xf-yun.com\ndate: Tue, 14 Nov 2023 22:13:20 GMT\nGET /v3.5/chat HTTP/1.1';
    const signature = createHmac('sha256', API_SECRET).update(origin).digest('base64');
    // the same figure from `openssl dgst -sha256 -hmac <secret> -binary | base64`
    expect(signature).toBe('wY71luqSD1bGHxZnPJxEOcBBwAvfFievKlzs+j6Lppw=');
    const authorization = Buffer.from(
      `api_key="${API_KEY}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`,
    ).toString('base64');

    const url = new URL(signSparkUrl('wss://spark-api.xf-yun.com/v3.5/chat', API_KEY, API_SECRET, 1_700_000_000));
    expect(url.origin + url.pathname).toBe('wss://spark-api.xf-yun.com/v3.5/chat');
    expect([...url.searchParams.keys()]).toEqual(['authorization', 'date', 'host']);
    expect(url.searchParams.get('date')).toBe(date);
    expect(url.searchParams.get('host')).toBe('spark-api.xf-yun.com');
    expect(url.searchParams.get('authorization')).toBe(authorization);
    // form-encoded, as Spark's own demos send it
    expect(url.search).toContain('date=Tue%2C+14+Nov+2023+22%3A13%3A20+GMT');
  });

  it('signs the host and path of a stand-in base URL, http becoming ws', () => {
    const target = xunfeiAdaptor.target({ ...channel, baseUrl: 'http://127.0.0.1:8123' }, callFor('chat', 'generalv3.5', true));
    if (isUpstreamFailure(target)) throw new Error(target.message);
    const url = new URL(target.url);
    expect(url.origin + url.pathname).toBe('ws://127.0.0.1:8123/v3.5/chat');
    expect(url.searchParams.get('host')).toBe('127.0.0.1:8123');
    const expected = new URL(signSparkUrl('ws://127.0.0.1:8123/v3.5/chat', API_KEY, API_SECRET, 1_700_000_000));
    expect(url.searchParams.get('authorization')).toBe(expected.searchParams.get('authorization'));
    const https = xunfeiAdaptor.target({ ...channel, baseUrl: 'https://spark.mirror.example/' }, callFor('chat', 'generalv3.5', true));
    if (isUpstreamFailure(https)) throw new Error(https.message);
    expect(https.url.startsWith('wss://spark.mirror.example/v3.5/chat?')).toBe(true);
  });

  it('refuses a key that is not APPID|APISecret|APIKey', () => {
    const target = xunfeiAdaptor.target({ ...channel, key: 'only|two' }, callFor('chat', 'generalv3.5', true));
    expect(isUpstreamFailure(target) && target.deadKey).toBe(true);
  });
});

describe('Spark versions and the request frame', () => {
  const request: ChatRequest = {
    model: 'generalv3.5',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    ],
    n: 5,
    temperature: 0,
  };

  it('maps each version to its documented path and domain', () => {
    const expected: Record<string, [string, string]> = {
      'v1.1': ['/v1.1/chat', 'lite'],
      'v2.1': ['/v2.1/chat', 'generalv2'],
      'v3.1': ['/v3.1/chat', 'generalv3'],
      'v3.5': ['/v3.5/chat', 'generalv3.5'],
      'v4.0': ['/v4.0/chat', '4.0Ultra'],
      'pro-128k': ['/chat/pro-128k', 'pro-128k'],
      'max-32k': ['/chat/max-32k', 'max-32k'],
    };
    expect(Object.fromEntries(SPARK_VERSIONS.map((row) => [row.version, [row.path, row.domain]]))).toEqual(expected);
    for (const [version, [path, domain]] of Object.entries(expected)) {
      const versioned = { ...channel, other: version };
      const call = callFor('chat', 'SparkDesk', true, versioned);
      const target = xunfeiAdaptor.target(versioned, call);
      if (isUpstreamFailure(target)) throw new Error(target.message);
      expect(new URL(target.url).pathname).toBe(path);
      const frame = JSON.parse(xunfeiAdaptor.encodeChat(request, call)) as { parameter: { chat: { domain: string } } };
      expect(frame.parameter.chat.domain).toBe(domain);
    }
  });

  it("lets the client's api-version override the channel, and the model decide when other is empty", () => {
    const call = { ...callFor('chat', 'SparkDesk', true), query: { 'api-version': 'v4.0' } };
    expect(sparkVersion(channel, call).domain).toBe('4.0Ultra');
    expect(sparkVersion({ ...channel, other: '' }, callFor('chat', 'generalv3', true)).version).toBe('v3.1');
    expect(sparkVersion({ ...channel, other: '' }, callFor('chat', 'SparkDesk', true)).version).toBe('v1.1');
    expect(sparkVersion({ ...channel, other: 'max' }, callFor('chat', 'x', true)).version).toBe('v3.5');
  });

  it('sends top_k only from top_k, never from n, and keeps the system turn', () => {
    const call = { ...callFor('chat', 'generalv3.5', true), channel };
    const frame = JSON.parse(xunfeiAdaptor.encodeChat(request, call)) as {
      header: { app_id: string };
      parameter: { chat: Record<string, unknown> };
      payload: { message: { text: unknown[] } };
    };
    expect(frame.header.app_id).toBe(APP_ID);
    expect(frame.parameter.chat).toEqual({ domain: 'generalv3.5', temperature: 0 });
    expect(frame.payload.message.text).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(JSON.stringify(frame)).not.toMatch(/Okay/);
    const withTopK = JSON.parse(xunfeiAdaptor.encodeChat({ ...request, top_k: 3, max_completion_tokens: 99 }, call)) as {
      parameter: { chat: Record<string, unknown> };
    };
    expect(withTopK.parameter.chat).toEqual({ domain: 'generalv3.5', temperature: 0, top_k: 3, max_tokens: 99 });
  });
});

describe('Spark answer frames', () => {
  const frame = (code: number, message: string, status = 2) => JSON.stringify({ header: { code, message, sid: 'cht000x@dx1', status } });

  it('surfaces an error frame instead of swallowing it', () => {
    const decoder = xunfeiAdaptor.decodeChatStream(callFor('chat', 'generalv3.5', true));
    const first = decoder.push(
      JSON.stringify({
        header: { code: 0, message: 'Success', sid: 'cht000x@dx1', status: 0 },
        payload: { choices: { status: 0, seq: 0, text: [{ content: 'Hel', role: 'assistant', index: 0 }] } },
      }),
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      id: 'chatcmpl-cht000x@dx1',
      model: 'generalv3.5',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }],
    });
    expect(decoder.push(frame(10014, '输出内容涉及敏感信息，审核不通过'))).toEqual([]);
    expect(decoder.failure()).toMatchObject({ code: 10014, type: 'content_filter', retryable: false, deadKey: false });
    expect(decoder.done()).toBe(false);
  });

  it('classifies the documented codes', () => {
    const classify = (code: number) => xunfeiAdaptor.failure(200, frame(code, `code ${code}`));
    for (const code of [10013, 10019])
      expect(classify(code)).toMatchObject({ type: 'content_filter', retryable: false, deadKey: false, status: 400 });
    for (const code of [11200, 10016, 10015]) expect(classify(code)).toMatchObject({ deadKey: true, retryable: true });
    for (const code of [11201, 11202, 11203, 10110]) expect(classify(code)).toMatchObject({ deadKey: false, retryable: true, status: 429 });
    for (const code of [10005, 10907]) expect(classify(code)).toMatchObject({ deadKey: false, retryable: false, status: 400 });
    for (const code of [10000, 10012, 10222]) expect(classify(code)).toMatchObject({ deadKey: false, retryable: true });
    // handshake refusals
    expect(xunfeiAdaptor.failure(401, '{"message":"HMAC signature cannot be verified"}')).toMatchObject({
      deadKey: true,
      message: 'HMAC signature cannot be verified',
    });
    expect(
      xunfeiAdaptor.failure(
        403,
        '{"message":"HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication"}',
      ),
    ).toMatchObject({
      deadKey: false,
      retryable: true,
    });
  });

  it('a whole answer cut short before the last frame is a failure, not a partial success', () => {
    const partial = JSON.stringify({
      header: { code: 0, message: 'Success', sid: 's', status: 0 },
      payload: { choices: { status: 0, seq: 0, text: [{ content: 'Hi', role: 'assistant', index: 0 }] } },
    });
    const decoded = xunfeiAdaptor.decodeChat(partial, callFor('chat', 'generalv3.5', false));
    expect(isUpstreamFailure(decoded) && decoded.status).toBe(502);
  });
});
