// The AWS Bedrock adaptor (Converse and ConverseStream): the shared contract
// over fixtures of AWS's wire format (the event-stream ones byte-exact), then
// its particulars: keys, the SigV4 signature, model ids, the frames'
// exceptions and corruption, and the failures' classes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { bedrockAdaptor, bedrockModelId, rerankModelArn } from '../../../server/protocols/upstream/bedrock';
import { chunkFrame, eventFrame, exceptionFrame } from '../../../server/protocols/upstream/bedrock/__fixtures__/build';
import { MessagesUsageWatcher } from '../../../server/protocols/inbound/anthropicMessages';
import { adaptorForChannelType } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { keyFitsFormat } from '../../../common/channelTypes';
import { signV4 } from '../../../server/protocols/upstream/bedrock/sigv4';
import { callFor, describeAdaptor, fixtureDir } from './contract';

describeAdaptor('bedrock', bedrockAdaptor);

const IAM: ChannelConfig = { type: 33, key: 'AKIDEXAMPLE|wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY|eu-west-3', baseUrl: '', other: '' };
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const encode = (request: Partial<ChatRequest>, model = MODEL): Record<string, unknown> =>
  JSON.parse(bedrockAdaptor.encodeChat({ model, messages: [], ...request }, callFor('chat', model, false, IAM))) as Record<string, unknown>;
const targetOf = (channel: ChannelConfig, stream = false, model = MODEL): HttpTarget => {
  const target = bedrockAdaptor.target(channel, callFor('chat', model, stream, channel));
  if (isUpstreamFailure(target)) throw new Error(target.message);
  return target;
};

describe('bedrock adaptor: registry, keys and target', () => {
  it('is the adaptor for channel type 33', () => {
    expect(adaptorForChannelType(33)).toBe(bedrockAdaptor);
  });

  it("goes to the key's region, or the channel's base URL (an emulator), on Converse or ConverseStream", () => {
    expect(targetOf(IAM).url).toBe(
      'https://bedrock-runtime.eu-west-3.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse',
    );
    const local = targetOf({ ...IAM, baseUrl: 'http://127.0.0.1:9999/' }, true);
    expect(local.url).toBe('http://127.0.0.1:9999/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    expect(local.headers.accept).toBe('application/vnd.amazon.eventstream');
    // IAM keys sign later; nothing secret is in the target
    expect(JSON.stringify(local)).not.toContain('wJalrXUtnFEMI');
  });

  it('sends a Bedrock API key as a bearer token, its region from the key, else `other`, else us-east-1', () => {
    expect(targetOf({ type: 33, key: 'ABSKexample', baseUrl: '', other: '' }).url).toMatch(
      /^https:\/\/bedrock-runtime\.us-east-1\.amazonaws\.com\//,
    );
    expect(targetOf({ type: 33, key: 'ABSKexample', baseUrl: '', other: 'ap-northeast-1' }).url).toMatch(
      /bedrock-runtime\.ap-northeast-1\./,
    );
    const suffixed = targetOf({ type: 33, key: 'ABSKexample|us-west-2', baseUrl: '', other: 'ap-northeast-1' });
    expect(suffixed.url).toMatch(/bedrock-runtime\.us-west-2\./);
    expect(suffixed.headers.authorization).toBe('Bearer ABSKexample');
  });

  it('refuses a key it cannot read, as a dead key, before anything is sent', () => {
    for (const key of ['AK||us-east-1', 'AK|SK|not a region', 'a|b|us-east-1|token|extra']) {
      const target = bedrockAdaptor.target({ ...IAM, key }, callFor('chat', MODEL, false));
      expect(isUpstreamFailure(target), key).toBe(true);
      if (isUpstreamFailure(target)) expect(target.deadKey).toBe(true);
    }
    expect(isUpstreamFailure(bedrockAdaptor.target(IAM, callFor('images', MODEL, false)))).toBe(true);
  });

  it("the channel form's key check takes every written form and no other", () => {
    for (const key of ['AK|SK|us-east-1', 'AK|SK|us-east-1|session', 'ABSKkey', 'ABSKkey|us-west-2'])
      expect(keyFitsFormat(33, key), key).toBe(true);
    for (const key of ['', 'a|b|c|d|e', 'AK||us-east-1']) expect(keyFitsFormat(33, key), key).toBe(false);
    // the single formats are untouched
    expect(keyFitsFormat(15, 'a|b')).toBe(true);
    expect(keyFitsFormat(15, 'a')).toBe(false);
  });

  it("maps one-api's Claude names to Bedrock ids and passes any other id as it is", () => {
    expect(bedrockModelId('claude-3-5-sonnet-20241022')).toBe('anthropic.claude-3-5-sonnet-20241022-v2:0');
    expect(bedrockModelId('claude-3-haiku-20240307')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(bedrockModelId('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe('us.anthropic.claude-3-7-sonnet-20250219-v1:0');
    expect(bedrockModelId('amazon.nova-pro-v1:0')).toBe('amazon.nova-pro-v1:0');
  });
});

describe('bedrock adaptor: the SigV4 signature', () => {
  const body = encode({ messages: [{ role: 'user', content: 'Hi' }] });

  it('signs with the same library a verifier re-signs with, over host, path, date and body', async () => {
    const channel = { ...IAM, baseUrl: 'http://127.0.0.1:4100' };
    const call = callFor('chat', MODEL, false, channel);
    const text = JSON.stringify(body);
    const signed = await bedrockAdaptor.sign!(targetOf(channel), text, channel, call);
    if (isUpstreamFailure(signed)) throw new Error(signed.message);
    expect(signed.headers['x-amz-date']).toBe('20231114T221320Z');
    expect(signed.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20231114\/eu-west-3\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(signed.headers).not.toHaveProperty('host');
    // an independent signer with the secret agrees; a changed body or secret does not
    const verify = async (secret: string, payload: string) => {
      const signer = new SignatureV4({
        service: 'bedrock',
        region: 'eu-west-3',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: secret },
        sha256: Sha256,
      });
      const again = await signer.sign(
        {
          method: 'POST',
          protocol: 'http:',
          hostname: '127.0.0.1',
          port: 4100,
          path: '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse',
          query: {},
          headers: { 'content-type': 'application/json', accept: 'application/json', host: '127.0.0.1:4100' },
          body: payload,
        },
        { signingDate: new Date(call.now * 1000) },
      );
      return again.headers.authorization;
    };
    expect(await verify('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', text)).toBe(signed.headers.authorization);
    expect(await verify('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', `${text} `)).not.toBe(signed.headers.authorization);
    expect(await verify('another secret', text)).not.toBe(signed.headers.authorization);
  });

  it('sends a session token, signed, when the key has a fourth part; an API key is not signed', async () => {
    const channel = { ...IAM, key: `${IAM.key}|FwoGZXIvYXdzEXAMPLE` };
    const signed = await bedrockAdaptor.sign!(targetOf(channel), '{}', channel, callFor('chat', MODEL, false, channel));
    if (isUpstreamFailure(signed)) throw new Error(signed.message);
    expect(signed.headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEXAMPLE');
    expect(signed.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
    const apiKey = { ...IAM, key: 'ABSKexample' };
    const target = targetOf(apiKey);
    expect(await bedrockAdaptor.sign!(target, '{}', apiKey, callFor('chat', MODEL, false, apiKey))).toBe(target);
  });
});

describe('bedrock adaptor: the SigV4 signer against the AWS library', () => {
  /** What @smithy/signature-v4 (hashing in JavaScript) writes for the same request. */
  async function librarySigned(
    request: { host: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: string },
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
    region: string,
    date: Date,
  ) {
    const [hostname, port] = request.host.split(':');
    const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Sha256 });
    const signed = await signer.sign(
      {
        method: 'POST',
        protocol: 'https:',
        hostname,
        ...(port ? { port: Number(port) } : {}),
        path: request.path,
        query: request.query,
        headers: { ...request.headers, host: request.host },
        body: request.body,
      },
      { signingDate: date },
    );
    const { host: _host, ...headers } = signed.headers;
    return headers;
  }

  interface SigningCase {
    name: string;
    request: { host: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: string };
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  }
  const cases: SigningCase[] = [
    {
      name: 'a Converse call',
      request: {
        host: 'bedrock-runtime.eu-west-3.amazonaws.com',
        path: '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse',
        query: {},
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: '{"messages":[{"role":"user","content":[{"text":"Hi ✓"}]}]}',
      },
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    },
    {
      name: 'a session token, a port, a query to sort and escape, a path with dots, spaced and unsignable headers',
      request: {
        host: '127.0.0.1:4100',
        path: '/model/./a b/../arn%3Aaws%3Abedrock%2Fx/invoke/',
        query: { 'z-last': "it's (a) * !", 'A-first': 'a=b&c', 'x-amz-signature': 'left out' },
        headers: {
          'Content-Type': 'application/json',
          'X-Custom': '  two   spaces	here  ',
          'User-Agent': 'not signed',
          'sec-fetch-mode': 'not signed',
          'proxy-thing': 'not signed',
        },
        body: '',
      },
      credentials: { accessKeyId: 'AKIDOTHER', secretAccessKey: 'another/secret+key', sessionToken: 'FwoGZXIvYXdzEXAMPLE//token=' },
    },
  ];

  for (const { name, request, credentials } of cases) {
    it(`writes what the library writes: ${name}`, async () => {
      for (const date of [new Date('2023-11-14T22:13:20.123Z'), new Date('2026-02-28T23:59:59Z')]) {
        const ours = signV4({ method: 'POST', ...request }, credentials, { region: 'eu-west-3', service: 'bedrock' }, date);
        expect(ours).toEqual(await librarySigned(request, credentials, 'eu-west-3', date));
      }
    });
  }
});

describe('bedrock adaptor: requests', () => {
  it('turns tool calls and results into toolUse and toolResult blocks, in alternating turns', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'tooluse_1', content: '18 C' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18 C' }] } }, { text: 'Thanks' }] },
    ]);
  });

  it('keeps zero sampling values, names a forced tool, and gives top_k and cache points only to Claude', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    const claude = encode({
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0,
      top_p: 0,
      top_k: 5,
      tools,
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    expect(claude.inferenceConfig).toEqual({ temperature: 0, topP: 0 });
    expect(claude.additionalModelRequestFields).toEqual({ top_k: 5 });
    expect((claude.toolConfig as { toolChoice: unknown }).toolChoice).toEqual({ tool: { name: 'f' } });
    const marked = [{ type: 'text', text: 'long', cache_control: { type: 'ephemeral' } }];
    expect(encode({ messages: [{ role: 'user', content: marked }] }).messages).toEqual([
      { role: 'user', content: [{ text: 'long' }, { cachePoint: { type: 'default' } }] },
    ]);
    const nova = encode({ messages: [{ role: 'user', content: marked }], top_k: 5, tools, tool_choice: 'none' }, 'amazon.nova-pro-v1:0');
    expect(nova).not.toHaveProperty('additionalModelRequestFields');
    expect(nova.messages).toEqual([{ role: 'user', content: [{ text: 'long' }] }]);
    expect(nova.toolConfig).not.toHaveProperty('toolChoice');
  });

  it('declares the tools of a tool-call history sent without tools, as Converse requires a toolConfig then', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'tooluse_1', content: 'sunny' },
      ],
    });
    expect(body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: {} } } } }],
    });
    expect(encode({ messages: [{ role: 'user', content: 'no tools' }] })).not.toHaveProperty('toolConfig');
  });

  it("asks a Claude that thinks for extended thinking from reasoning_effort (as Anthropic's adaptor does), never another model", () => {
    const sonnet = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
    const body = encode(
      { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', max_tokens: 30000, temperature: 0.5, top_p: 0.9 },
      sonnet,
    );
    // high is 24,576, but the answer keeps a quarter of max_tokens
    expect(body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 22500 } });
    expect(body.inferenceConfig).toEqual({ maxTokens: 30000 });
    // a client of the Messages API sends its own thinking block, which goes as it is
    const own = encode(
      { messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 2000 }, max_tokens: 4000 },
      sonnet,
    );
    expect(own.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    // no limit to fit a budget under, a model that does not think, or a forced tool: no thinking
    expect(encode({ messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high' }, sonnet)).not.toHaveProperty(
      'additionalModelRequestFields',
    );
    expect(encode({ messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', max_tokens: 30000 })).not.toHaveProperty(
      'additionalModelRequestFields',
    );
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(
      encode(
        { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', max_tokens: 30000, tools, tool_choice: 'required' },
        sonnet,
      ),
    ).not.toHaveProperty('additionalModelRequestFields');
  });

  it('refuses an image by URL or of a format Converse lacks, with the reason', () => {
    expect(() =>
      encode({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }),
    ).toThrow(/only inline/);
    expect(() =>
      encode({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }),
    ).toThrow(/image\/bmp/);
  });
});

describe('bedrock adaptor: answers, streams and failures', () => {
  const call = callFor('chat', MODEL, true, IAM);

  it('reads a reasoning block and a guardrail stop', () => {
    const decoded = bedrockAdaptor.decodeChat(
      JSON.stringify({
        output: {
          message: {
            role: 'assistant',
            content: [{ reasoningContent: { reasoningText: { text: 'Thinking.', signature: 's' } } }, { text: 'Blocked.' }],
          },
        },
        stopReason: 'guardrail_intervened',
        usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
      }),
      callFor('chat', MODEL, false, IAM),
    );
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Blocked.', reasoning_content: 'Thinking.' },
      finish_reason: 'content_filter',
    });
    expect(decoded.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(isUpstreamFailure(bedrockAdaptor.decodeChat('not json', call))).toBe(true);
  });

  it('a stream that ends in an exception frame fails with its class, after the text it gave', () => {
    const decoder = bedrockAdaptor.decodeChatStream(call);
    const chunks = decoder.push(
      Buffer.concat([
        eventFrame('messageStart', { role: 'assistant' }),
        eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
        exceptionFrame('throttlingException', 'Too many requests, please wait before trying again.'),
      ]),
    );
    expect(chunks.map((chunk) => chunk.choices[0].delta.content)).toEqual(['', 'Hel']);
    expect(decoder.failure()).toMatchObject({
      status: 429,
      code: 'ThrottlingException',
      retryable: true,
      deadKey: false,
      message: 'Too many requests, please wait before trying again.',
    });
    const invalid = bedrockAdaptor.decodeChatStream(call);
    invalid.push(exceptionFrame('validationException', 'The model returned the following errors: bad'));
    expect(invalid.failure()).toMatchObject({ status: 400, retryable: false });
  });

  it('a corrupt frame (a CRC wrong) is a failure, not garbage text; a stream cut mid-frame reports no usage', () => {
    const wire = readFileSync(join(fixtureDir('bedrock'), 'chat.stream.bin'));
    const corrupt = Buffer.from(wire);
    corrupt[100] ^= 0xff;
    const decoder = bedrockAdaptor.decodeChatStream(call);
    decoder.push(corrupt);
    expect(decoder.failure()?.status).toBe(502);
    const cut = bedrockAdaptor.decodeChatStream(call);
    const chunks = [...cut.push(wire.subarray(0, wire.length - 10)), ...cut.end()];
    expect(chunks.length).toBeGreaterThan(0);
    expect(cut.usage()).toBeUndefined();
    expect(cut.done()).toBe(false);
    expect(cut.failure()).toBeUndefined();
  });

  it('classifies refusals: dead keys (403s), throttling retryable, validation not', () => {
    const said = (status: number, message: string) => bedrockAdaptor.failure(status, JSON.stringify({ message }));
    expect(said(403, 'The request signature we calculated does not match the signature you provided.')).toMatchObject({
      code: 'InvalidSignatureException',
      deadKey: true,
      retryable: true,
    });
    expect(said(403, "You don't have access to the model with the specified model ID.")).toMatchObject({
      code: 'AccessDeniedException',
      deadKey: true,
    });
    expect(said(403, 'The security token included in the request is expired')).toMatchObject({
      code: 'ExpiredTokenException',
      deadKey: true,
    });
    expect(said(429, 'Too many requests, please wait before trying again.')).toMatchObject({
      code: 'ThrottlingException',
      deadKey: false,
      retryable: true,
    });
    expect(said(400, 'The provided model identifier is invalid.')).toMatchObject({
      code: 'ValidationException',
      deadKey: false,
      retryable: false,
    });
    expect(said(404, 'Model not found')).toMatchObject({ retryable: true, deadKey: false });
    expect(bedrockAdaptor.failure(502, '<html>Bad Gateway</html>')).toMatchObject({
      retryable: true,
      message: 'upstream answered HTTP 502: <html>Bad Gateway</html>',
    });
  });
});

describe('bedrock adaptor: the native path for an Anthropic Messages client (InvokeModel)', () => {
  const native = bedrockAdaptor.native!;
  const SONNET = 'claude-3-7-sonnet-20250219';
  const wire = readFileSync(join(fixtureDir('bedrock'), 'invoke.stream.bin'));
  const expected = readFileSync(join(fixtureDir('bedrock'), 'invoke.expect.sse'), 'utf8');
  const { usage } = JSON.parse(readFileSync(join(fixtureDir('bedrock'), 'invoke.stream.json'), 'utf8')) as {
    usage: Record<string, number>;
  };
  const reframe = (bytes: Buffer, cuts: number[] = []) => {
    const reframer = native.reframe(callFor('chat', SONNET, true, IAM));
    let text = '';
    let start = 0;
    for (const cut of [...cuts, bytes.length]) {
      text += reframer.push(bytes.subarray(start, cut));
      start = cut;
    }
    return { reframer, text: text + reframer.end() };
  };

  it('serves Claude (by name, Bedrock id or cross-region profile) for the Messages protocol, and no other model', () => {
    expect(native.inbound).toBe('anthropic');
    for (const model of [SONNET, 'anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-3-7-sonnet-20250219-v1:0'])
      expect(native.serves(model), model).toBe(true);
    for (const model of ['amazon.nova-pro-v1:0', 'meta.llama3-70b-instruct-v1:0', 'llama3-8b-8192'])
      expect(native.serves(model), model).toBe(false);
  });

  it('goes to invoke or invoke-with-response-stream of the Bedrock id, the API key as bearer', () => {
    const whole = native.target(IAM, callFor('chat', SONNET, false, IAM));
    const streamed = native.target({ type: 33, key: 'ABSKexample|us-west-2', baseUrl: '', other: '' }, callFor('chat', SONNET, true));
    if (isUpstreamFailure(whole) || isUpstreamFailure(streamed)) throw new Error('no target');
    expect(whole.url).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke');
    expect(whole.headers).toEqual({ 'content-type': 'application/json', accept: 'application/json' });
    expect(streamed.url).toBe(
      'https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke-with-response-stream',
    );
    expect(streamed.headers).toMatchObject({
      accept: 'application/vnd.amazon.eventstream',
      'x-amzn-bedrock-accept': 'application/json',
      authorization: 'Bearer ABSKexample',
    });
    expect(isUpstreamFailure(native.target({ ...IAM, key: 'AK||us-east-1' }, callFor('chat', SONNET, false)))).toBe(true);
  });

  it("keeps every field the client sent but model and stream, adds Bedrock's anthropic_version, and carries anthropic-beta into the body", () => {
    const client = {
      model: 'anthropic.claude-3-7-sonnet-20250219-v1:0',
      stream: true,
      max_tokens: 2048,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'u-1' },
      anthropic_beta: ['interleaved-thinking-2025-05-14'],
    };
    const encoded = JSON.parse(
      native.encode(
        Buffer.from(JSON.stringify(client)),
        { 'anthropic-beta': 'interleaved-thinking-2025-05-14, token-efficient-tools-2025-02-19' },
        callFor('chat', SONNET, true, IAM),
      ),
    );
    const { model: _model, stream: _stream, ...kept } = client;
    expect(encoded).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      ...kept,
      anthropic_beta: ['interleaved-thinking-2025-05-14', 'token-efficient-tools-2025-02-19'],
    });
    expect(JSON.parse(native.encode('{"max_tokens":5,"messages":[]}', {}, callFor('chat', SONNET, false, IAM)))).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 5,
      messages: [],
    });
    expect(() => native.encode('[1]', {}, callFor('chat', SONNET, false, IAM))).toThrow(/not a JSON object/);
  });

  it("re-frames the byte-exact event stream as Anthropic's SSE, and the passthrough watcher bills its usage, cache included", () => {
    const { reframer, text } = reframe(wire);
    expect(text).toBe(expected);
    expect(reframer.begun()).toBe(true);
    expect(reframer.failure()).toBeUndefined();
    const watcher = new MessagesUsageWatcher();
    expect(watcher.pushBytes(Buffer.from(text)).toString('utf8') + watcher.flush()).toBe(text);
    expect(watcher.reportedUsage()).toEqual(usage);
    expect(watcher.streamedText()).toBe('Let me check the weather in Paris for you.');
  });

  it('gives the same SSE however the bytes are cut: at every byte offset, and byte by byte', () => {
    for (let offset = 1; offset < wire.length; offset += 1) expect(reframe(wire, [offset]).text, `cut at byte ${offset}`).toBe(expected);
    expect(
      reframe(
        wire,
        Array.from({ length: wire.length - 1 }, (_, index) => index + 1),
      ).text,
    ).toBe(expected);
  });

  it("an exception frame becomes Anthropic's error event (a failure before any event is the channel's), a corrupt frame too, a cut mid-frame throws at the end", () => {
    const start = {
      type: 'message_start',
      message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 1, output_tokens: 1 } },
    };
    const late = reframe(Buffer.concat([chunkFrame(start), exceptionFrame('modelStreamErrorException', 'The model stream failed.')]));
    expect(late.reframer.begun()).toBe(true);
    expect(late.reframer.failure()).toMatchObject({ status: 424, code: 'ModelStreamErrorException' });
    expect(
      late.text.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The model stream failed."}}\n\n'),
    ).toBe(true);
    const early = reframe(exceptionFrame('throttlingException', 'Too many requests, please wait before trying again.'));
    expect(early.reframer.begun()).toBe(false);
    expect(early.reframer.failure()).toMatchObject({ status: 429, retryable: true });
    expect(early.text).toContain('"type":"rate_limit_error"');
    const corrupt = Buffer.from(wire);
    corrupt[40] ^= 0xff;
    const broken = reframe(corrupt);
    expect(broken.reframer.failure()?.status).toBe(502);
    expect(broken.text).toMatch(/^event: error\n/);
    const reframer = native.reframe(callFor('chat', SONNET, true, IAM));
    const cutAt = wire.length - 7;
    expect(reframer.push(wire.subarray(0, cutAt))).toBe(expected.slice(0, expected.lastIndexOf('event: message_stop')));
    expect(() => reframer.end()).toThrow(/broke off inside a frame/);
  });
});

describe('bedrock adaptor: rerank (the Agents for Amazon Bedrock runtime)', () => {
  const request = {
    model: 'cohere.rerank-v3-5:0',
    query: 'capital of the United States',
    documents: ['Carson City is in Nevada.', 'Saipan.', 'Washington, D.C. is the capital.'],
    extra: {},
  };

  it("goes to bedrock-agent-runtime in the key's region (or the base URL), at /rerank", () => {
    const target = bedrockAdaptor.target(IAM, callFor('rerank', request.model, false, IAM));
    if (isUpstreamFailure(target)) throw new Error(target.message);
    expect(target.url).toBe('https://bedrock-agent-runtime.eu-west-3.amazonaws.com/rerank');
    const local = bedrockAdaptor.target(
      { ...IAM, key: 'ABSKexample', baseUrl: 'http://127.0.0.1:9999' },
      callFor('rerank', request.model, false),
    );
    if (isUpstreamFailure(local)) throw new Error(local.message);
    expect(local).toEqual({
      url: 'http://127.0.0.1:9999/rerank',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer ABSKexample' },
    });
  });

  it("encodes one TEXT query, INLINE TEXT sources and the model's foundation-model ARN; numberOfResults top_n, else every document", () => {
    const encoded = JSON.parse(bedrockAdaptor.encodeRerank!({ ...request, top_n: 2 }, callFor('rerank', request.model, false, IAM)));
    expect(encoded).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'capital of the United States' } }],
      sources: request.documents.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 2,
          modelConfiguration: { modelArn: 'arn:aws:bedrock:eu-west-3::foundation-model/cohere.rerank-v3-5:0' },
        },
      },
    });
    const all = JSON.parse(bedrockAdaptor.encodeRerank!({ ...request, top_n: 50 }, callFor('rerank', request.model, false, IAM)));
    expect(all.rerankingConfiguration.bedrockRerankingConfiguration.numberOfResults).toBe(3);
    // an ARN given as the model (a provisioned model, another region) goes as it is
    const arn = 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0';
    expect(rerankModelArn(arn, 'eu-west-3')).toBe(arn);
    expect(rerankModelArn('amazon.rerank-v1:0', 'us-west-2')).toBe(arn);
  });

  it('decodes the ranking, billed per query by the rule the vendor bills by; an answer without results is a failure', () => {
    const { answer } = JSON.parse(readFileSync(join(fixtureDir('bedrock'), 'rerank.answer.json'), 'utf8')) as { answer: unknown };
    expect(bedrockAdaptor.decodeRerank!(JSON.stringify(answer), callFor('rerank', request.model, false, IAM))).toEqual({
      model: request.model,
      results: [
        { index: 2, relevance_score: 0.9812 },
        { index: 0, relevance_score: 0.1204 },
        { index: 1, relevance_score: 0.0007 },
      ],
      billedBy: 'search_units',
      searchUnitsByRule: true,
    });
    expect(bedrockAdaptor.decodeRerank!('{"message":"x"}', callFor('rerank', request.model, false, IAM))).toMatchObject({ status: 502 });
  });
});

describe('bedrock adaptor: embeddings (InvokeModel)', () => {
  const TITAN = 'amazon.titan-embed-text-v2:0';
  const COHERE = 'cohere.embed-english-v3';
  const encodeFor = (model: string, request: Record<string, unknown>) =>
    JSON.parse(bedrockAdaptor.encodeEmbeddings!({ model, input: '', ...request }, callFor('embeddings', model, false, IAM)));

  it('goes to invoke of the model; Titan one text a call (the relay splits), Cohere every text at once', () => {
    const target = bedrockAdaptor.target(IAM, callFor('embeddings', TITAN, false, IAM));
    if (isUpstreamFailure(target)) throw new Error(target.message);
    expect(target.url).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(bedrockAdaptor.embeddingsPerInput!(TITAN)).toBe(true);
    expect(bedrockAdaptor.embeddingsPerInput!(COHERE)).toBe(false);
    expect(encodeFor(TITAN, { input: ['one text'], dimensions: 512, normalize: false })).toEqual({
      inputText: 'one text',
      dimensions: 512,
      normalize: false,
    });
    expect(encodeFor(COHERE, { input: ['a', 'b'] })).toEqual({ texts: ['a', 'b'], input_type: 'search_document' });
    expect(encodeFor(COHERE, { input: 'a', input_type: 'search_query', truncate: 'END' })).toEqual({
      texts: ['a'],
      input_type: 'search_query',
      truncate: 'END',
    });
    expect(() => encodeFor(TITAN, { input: [[1, 2]] })).toThrow(/text only/);
    expect(() => encodeFor(MODEL, { input: 'x' })).toThrow(/not an embedding model/);
  });

  it("decodes Titan's vector and token count, Cohere's vectors (plain or by type) with no count", () => {
    const call = callFor('embeddings', TITAN, false, IAM);
    expect(bedrockAdaptor.decodeEmbeddings!(JSON.stringify({ embedding: [0.6, 0.8], inputTextTokenCount: 4 }), call)).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
      model: TITAN,
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    const cohere = callFor('embeddings', COHERE, false, IAM);
    const plain = bedrockAdaptor.decodeEmbeddings!(
      JSON.stringify({ embeddings: [[1], [0]], id: 'e', response_type: 'embeddings_floats', texts: ['a', 'b'] }),
      cohere,
    );
    expect(plain).toMatchObject({
      data: [
        { index: 0, embedding: [1] },
        { index: 1, embedding: [0] },
      ],
      usage: { prompt_tokens: 0 },
    });
    const byType = bedrockAdaptor.decodeEmbeddings!(
      JSON.stringify({ embeddings: { float: [[0.5]] }, response_type: 'embeddings_by_type' }),
      cohere,
    );
    expect(byType).toMatchObject({ data: [{ index: 0, embedding: [0.5] }] });
    expect(bedrockAdaptor.decodeEmbeddings!('{"embeddings":"no"}', cohere)).toMatchObject({ status: 502 });
  });
});
