import { describe, expect, it } from 'vitest';
import { aliAdaptor, isMultimodalModel } from '../../../server/protocols/upstream/ali';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, decodeStream, describeAdaptor } from './contract';

describeAdaptor('ali', aliAdaptor);

const channel: ChannelConfig = { type: 17, key: 'sk-test', baseUrl: '', other: '' };
const encode = (request: Partial<ChatRequest>, stream = false, model = 'qwen-plus') =>
  JSON.parse(aliAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'hi' }], ...request }, callFor('chat', model, stream))) as {
    model: string;
    input: { messages: Array<Record<string, unknown>> };
    parameters: Record<string, unknown>;
  };

describe('ali adaptor particulars', () => {
  it('is the registered adaptor for the ali protocol', () => {
    expect(UPSTREAM_ADAPTORS.ali).toBe(aliAdaptor);
  });

  it('honours the channel base URL, and asks for SSE when streaming', () => {
    const whole = aliAdaptor.target({ ...channel, baseUrl: 'http://127.0.0.1:9/' }, callFor('chat', 'qwen-plus', false)) as HttpTarget;
    expect(whole.url).toBe('http://127.0.0.1:9/api/v1/services/aigc/text-generation/generation');
    expect(whole.headers).not.toHaveProperty('X-DashScope-SSE');
    const streamed = aliAdaptor.target(channel, callFor('chat', 'qwen-plus', true)) as HttpTarget;
    expect(streamed.headers).toMatchObject({ Authorization: 'Bearer sk-test', 'X-DashScope-SSE': 'enable', Accept: 'text/event-stream' });
  });

  it('streams incrementally: incremental_output only when streaming', () => {
    expect(encode({}, true).parameters).toMatchObject({ result_format: 'message', incremental_output: true });
    expect(encode({}, false).parameters).not.toHaveProperty('incremental_output');
  });

  it('sends the messages format with the system prompt as a system message, no prompt/history pairs or "Okay" turns', () => {
    const body = encode({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: [{ type: 'text', text: 'c' }] },
      ],
    });
    expect(body.input).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(JSON.stringify(body)).not.toMatch(/Okay|"prompt"|"history"/);
  });

  it('passes the sampling parameters and top_k as given (never n or max_tokens)', () => {
    const body = encode({
      temperature: 0,
      top_p: 0.1,
      top_k: 7,
      max_completion_tokens: 64,
      n: 3,
      stop: 'END',
      seed: 9,
      presence_penalty: -1,
      repetition_penalty: 1.1,
      response_format: { type: 'json_object' },
    });
    expect(body.parameters).toEqual({
      result_format: 'message',
      temperature: 0,
      top_p: 0.1,
      top_k: 7,
      max_tokens: 64,
      n: 3,
      stop: 'END',
      seed: 9,
      presence_penalty: -1,
      repetition_penalty: 1.1,
      response_format: { type: 'json_object' },
    });
  });

  it('sends tool calls and tool results in the messages', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"c":"x"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(body.input.messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"c":"x"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ]);
  });

  it('sends vision models to the multimodal path with {image}/{text} content', () => {
    expect(isMultimodalModel('qwen-vl-max')).toBe(true);
    expect(isMultimodalModel('qwen2.5-vl-72b-instruct')).toBe(true);
    expect(isMultimodalModel('qwen-plus')).toBe(false);
    expect((aliAdaptor.target(channel, callFor('chat', 'qwen-vl-max', false)) as HttpTarget).url).toBe(
      'https://dashscope.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    );
    const body = encode(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
              { type: 'text', text: 'what is it?' },
            ],
          },
        ],
      },
      false,
      'qwen-vl-max',
    );
    expect(body.input.messages).toEqual([{ role: 'user', content: [{ image: 'https://example.com/a.png' }, { text: 'what is it?' }] }]);
  });

  it('stream chunks carry the requested model (never ernie-bot) and "null" finish reasons read as none', () => {
    const wire = Buffer.from(
      'id:1\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":{"content":"Hi","role":"assistant"},"finish_reason":"null"}]},"usage":{"total_tokens":4,"input_tokens":3,"output_tokens":1},"request_id":"r-1"}\n\n' +
        'id:2\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":{"content":" there","role":"assistant"},"finish_reason":"length"}]},"usage":{"total_tokens":5,"input_tokens":3,"output_tokens":2},"request_id":"r-1"}\n\n',
    );
    const { chunks, usage, done } = decodeStream(aliAdaptor, callFor('chat', 'qwen-max', true), wire);
    expect(chunks.map((chunk) => chunk.model)).toEqual(['qwen-max', 'qwen-max']);
    expect(chunks.map((chunk) => chunk.id)).toEqual(['r-1', 'r-1']);
    expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null },
      { index: 0, delta: { content: ' there' }, finish_reason: 'length' },
    ]);
    expect(usage).toEqual({ promptTokens: 3, completionTokens: 2, cachedPromptTokens: 0 });
    expect(done).toBe(true);
  });

  it('reads reasoning content and reasoning tokens', () => {
    const decoded = aliAdaptor.decodeChat(
      JSON.stringify({
        output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: '4', reasoning_content: '2+2 is 4' } }] },
        usage: { input_tokens: 5, output_tokens: 30, total_tokens: 35, output_tokens_details: { reasoning_tokens: 28 } },
        request_id: 'r-2',
      }),
      callFor('chat', 'qwen3-max', false),
    );
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.choices[0].message).toEqual({ role: 'assistant', content: '4', reasoning_content: '2+2 is 4' });
    expect(decoded.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 30,
      total_tokens: 35,
      completion_tokens_details: { reasoning_tokens: 28 },
    });
    expect(decoded.model).toBe('qwen3-max');
    expect(decoded.id).toBe('r-2');
  });

  it('an error event in the stream is surfaced, not swallowed', () => {
    const call = callFor('chat', 'qwen-plus', true);
    const decoder = aliAdaptor.decodeChatStream(call);
    const chunks = decoder.push(
      'id:1\nevent:error\n:HTTP_STATUS/429\ndata:{"code":"Throttling.RateQuota","message":"Requests rate limit exceeded, please try again later.","request_id":"r-3"}\n\n',
    );
    expect(chunks).toEqual([]);
    expect(decoder.end()).toEqual([]);
    expect(decoder.failure()).toMatchObject({ status: 429, code: 'Throttling.RateQuota', retryable: true, deadKey: false });
    expect(decoder.done()).toBe(false);
  });

  it('a stream refused with a plain JSON body is surfaced', () => {
    const decoder = aliAdaptor.decodeChatStream(callFor('chat', 'qwen-plus', true));
    decoder.push(Buffer.from('{"code":"InvalidApiKey","message":"Invalid API-key provided.","request_id":"r"}'));
    decoder.end();
    expect(decoder.failure()).toMatchObject({ deadKey: true, status: 401 });
  });

  it('classifies the DashScope error codes', () => {
    const of = (status: number, code: string) =>
      aliAdaptor.failure(status, JSON.stringify({ code, message: `${code} said`, request_id: 'r' }));
    expect(of(400, 'Arrearage')).toMatchObject({ deadKey: true, retryable: true, message: 'Arrearage said' });
    expect(of(403, 'AccessDenied.Unpurchased')).toMatchObject({ deadKey: true, retryable: true });
    expect(of(429, 'Throttling')).toMatchObject({ deadKey: false, retryable: true, status: 429 });
    expect(of(429, 'Throttling.AllocationQuota')).toMatchObject({ deadKey: false, retryable: true });
    expect(of(400, 'DataInspectionFailed')).toMatchObject({ deadKey: false, retryable: false, status: 400 });
    expect(of(500, 'InternalError.Algo')).toMatchObject({ deadKey: false, retryable: true, status: 500 });
    expect(of(400, 'InvalidParameter')).toMatchObject({ retryable: false });
    expect(aliAdaptor.failure(503, 'upstream connect error')).toMatchObject({
      status: 503,
      retryable: true,
      message: 'DashScope answered HTTP 503: upstream connect error',
    });
  });

  it('assembles a streamed tool call with its id, name once and joined arguments', () => {
    const wire = Buffer.from(
      'data:{"output":{"choices":[{"message":{"content":"","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"w","arguments":"{\\"c\\":"}}],"role":"assistant"},"finish_reason":"null"}]},"request_id":"r"}\n\n' +
        'data:{"output":{"choices":[{"message":{"content":"","tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"w","arguments":"\\"x\\"}"}}],"role":"assistant"},"finish_reason":"tool_calls"}]},"usage":{"input_tokens":9,"output_tokens":4},"request_id":"r"}\n\n',
    );
    const call = callFor('chat', 'qwen-plus', true);
    const { chunks, usage } = decodeStream(aliAdaptor, call, wire);
    const whole = assembleChatResponse(chunks, call, usage!);
    expect(whole.choices[0].message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'w', arguments: '{"c":"x"}' } },
    ]);
    expect(whole.choices[0].finish_reason).toBe('tool_calls');
  });

  it('embeddings take a string input and come back in input order', () => {
    expect(
      JSON.parse(
        aliAdaptor.encodeEmbeddings!({ model: 'text-embedding-v3', input: 'hello' }, callFor('embeddings', 'text-embedding-v3', false)),
      ),
    ).toEqual({
      model: 'text-embedding-v3',
      input: { texts: ['hello'] },
      parameters: { text_type: 'document' },
    });
    const decoded = aliAdaptor.decodeEmbeddings!(
      JSON.stringify({
        output: {
          embeddings: [
            { text_index: 1, embedding: [2] },
            { text_index: 0, embedding: [1] },
          ],
        },
        usage: { total_tokens: 3 },
      }),
      callFor('embeddings', 'text-embedding-v3', false),
    );
    if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
    expect(decoded.data.map((item) => item.embedding)).toEqual([[1], [2]]);
  });
});

describe('ali adaptor failures in the gateway envelope', () => {
  it('reads {error: {code, message}} as well', () => {
    const failure = aliAdaptor.failure(
      400,
      JSON.stringify({
        error: {
          message: 'Access denied, please make sure your account is in good standing.',
          type: 'Arrearage',
          param: null,
          code: 'Arrearage',
        },
      }),
    );
    expect(failure).toMatchObject({
      deadKey: true,
      code: 'Arrearage',
      message: 'Access denied, please make sure your account is in good standing.',
    });
  });
});
