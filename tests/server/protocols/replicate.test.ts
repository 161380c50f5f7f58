import { describe, expect, it } from 'vitest';
import { replicateAdaptor } from '../../../server/protocols/upstream/replicate';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('replicate', replicateAdaptor);

const channel: ChannelConfig = { type: 46, key: 'r8_test', baseUrl: '', other: '' };
const MODEL = 'meta/meta-llama-3-8b-instruct';
const VERSION = '5a6809ca6288247d06daf6365557e5e429063f32a21146b2a807c682652136b8';
const encode = (request: Partial<ChatRequest>, model = MODEL) =>
  JSON.parse(
    replicateAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'hi' }], ...request }, callFor('chat', model, false, channel)),
  ) as {
    input: Record<string, unknown>;
    version?: string;
    stream?: boolean;
  };
const prediction = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: 'p1', status: 'succeeded', output: ['a'], metrics: { input_token_count: 3, output_token_count: 1 }, ...fields });

describe('replicate adaptor particulars', () => {
  it('is the registered adaptor for the replicate protocol', () => {
    expect(UPSTREAM_ADAPTORS.replicate).toBe(replicateAdaptor);
  });

  it('runs a model by name, or a version through /v1/predictions, in sync mode unless streamed', () => {
    const byName = replicateAdaptor.target({ ...channel, baseUrl: 'http://127.0.0.1:9/' }, callFor('chat', MODEL, false)) as HttpTarget;
    expect(byName.url).toBe('http://127.0.0.1:9/v1/models/meta/meta-llama-3-8b-instruct/predictions');
    expect(byName.headers).toMatchObject({ Authorization: 'Bearer r8_test', Prefer: 'wait=60' });
    const streamed = replicateAdaptor.target(channel, callFor('chat', MODEL, true)) as HttpTarget;
    expect(streamed.headers.Prefer).toBeUndefined();
    expect(
      JSON.parse(
        replicateAdaptor.encodeChat({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, callFor('chat', MODEL, true, channel)),
      ),
    ).toEqual({
      input: { prompt: 'hi' },
      stream: true,
    });
    expect(encode({}).stream).toBeUndefined();
    const byVersion = replicateAdaptor.target(channel, callFor('chat', `${MODEL}:${VERSION}`, false)) as HttpTarget;
    expect(byVersion.url).toBe('https://api.replicate.com/v1/predictions');
    expect(encode({}, `${MODEL}:${VERSION}`).version).toBe(VERSION);
    const refused = replicateAdaptor.target(channel, callFor('chat', 'gpt-4o', false));
    expect(isUpstreamFailure(refused) && refused.status).toBe(400);
  });

  it('writes a conversation out as role lines ending with the assistant, system text apart', () => {
    const { input } = encode({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(input).toEqual({ prompt: 'user: a\nassistant: b\nuser: c\nassistant:', system_prompt: 'Be brief.' });
  });

  it('refuses function tools and tool results', () => {
    expect(() => encode({ tools: [{ type: 'function', function: { name: 'f' } }] })).toThrow(/function tools/);
    expect(() => encode({ messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }] })).toThrow(/tool results/);
  });

  it('reads a failed prediction and one still running when the wait ended as failures', () => {
    const call = callFor('chat', MODEL, false, channel);
    expect(replicateAdaptor.decodeChat(prediction({ status: 'failed', error: 'CUDA out of memory', output: null }), call)).toMatchObject({
      status: 502,
      retryable: true,
      message: 'Replicate: CUDA out of memory',
    });
    expect(replicateAdaptor.decodeChat(prediction({ status: 'processing', output: null }), call)).toMatchObject({
      status: 504,
      code: 'prediction_unfinished',
    });
  });

  it('takes a model whose output is one string, and streams an empty answer with its finish', () => {
    const call = callFor('chat', MODEL, true, channel);
    const whole = replicateAdaptor.decodeChat(prediction({ output: 'all at once' }), call);
    expect(!isUpstreamFailure(whole) && whole.choices[0].message.content).toBe('all at once');
    const decoder = replicateAdaptor.decodeChatStream(call);
    const chunks = decoder.push('event: done\ndata: {}\n\n');
    expect(chunks).toHaveLength(1);
    expect(chunks[0].choices[0]).toMatchObject({ finish_reason: 'stop', delta: { role: 'assistant', content: '' } });
    expect(decoder.done()).toBe(true);
    expect(decoder.end()).toEqual([]);
    expect(decoder.failure()).toBeUndefined();
    // the events carry no counts: they come from the prediction fetched afterwards
    expect(decoder.usage()).toBeUndefined();
    expect(replicateAdaptor.usageAfterStream!(prediction({}), call)).toEqual({
      promptTokens: 3,
      completionTokens: 1,
      cachedPromptTokens: 0,
    });
    expect(replicateAdaptor.usageAfterStream!(prediction({ status: 'processing', metrics: undefined }), call)).toBeUndefined();
  });

  it('streams an output event of several data lines as one piece with its newlines, and ignores logs', () => {
    const call = callFor('chat', MODEL, true, channel);
    const decoder = replicateAdaptor.decodeChatStream(call);
    const chunks = decoder.push(
      'event: logs\ndata: warming up\n\nevent: output\nid: 1:0\ndata: first line\ndata: second line\n\nevent: output\ndata: !\n\n',
    );
    expect(chunks.map((chunk) => chunk.choices[0].delta.content)).toEqual(['first line\nsecond line', '!']);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks[1].choices[0].delta.role).toBeUndefined();
    expect(decoder.done()).toBe(false);
  });

  it('reads an error event, a canceled prediction and a stream that ends before done as failures', () => {
    const call = callFor('chat', MODEL, true, channel);
    const errored = replicateAdaptor.decodeChatStream(call);
    errored.push('event: output\ndata: a\n\nevent: error\ndata: CUDA out of memory\n\nevent: done\ndata: {"reason":"error"}\n\n');
    expect(errored.failure()).toMatchObject({ status: 502, message: 'Replicate: CUDA out of memory', retryable: true, deadKey: false });
    const canceled = replicateAdaptor.decodeChatStream(call);
    expect(canceled.push('event: done\ndata: {"reason":"canceled"}\n\n')).toEqual([]);
    expect(canceled.failure()).toMatchObject({ code: 'prediction_canceled' });
    const cut = replicateAdaptor.decodeChatStream(call);
    expect(cut.push('event: output\ndata: a\n\n')).toHaveLength(1);
    cut.end();
    expect(cut.failure()).toMatchObject({ status: 502, code: 'stream_cut' });
  });

  it('follows the stream and the prediction the created prediction names, with the token, and only a prediction that did not fail', () => {
    const call = callFor('chat', MODEL, true, channel);
    const urls = {
      get: 'https://api.replicate.com/v1/predictions/p1',
      stream: 'https://stream.replicate.com/v1/files/bcwr-abc',
      cancel: 'https://api.replicate.com/v1/predictions/p1/cancel',
    };
    const targets = replicateAdaptor.followStream!(
      prediction({ status: 'starting', output: null, metrics: undefined, urls }),
      channel,
      call,
    );
    expect(targets).toEqual({
      stream: {
        url: urls.stream,
        method: 'GET',
        headers: { Authorization: 'Bearer r8_test', Accept: 'text/event-stream', 'Cache-Control': 'no-store' },
      },
      usage: { url: urls.get, method: 'GET', headers: { Authorization: 'Bearer r8_test', Accept: 'application/json' } },
    });
    expect(replicateAdaptor.followHosts).toEqual(['replicate.com']);
    expect(replicateAdaptor.followStream!(prediction({ status: 'starting', urls: { get: urls.get } }), channel, call)).toMatchObject({
      status: 502,
      code: 'stream_unsupported',
    });
    expect(replicateAdaptor.followStream!(prediction({ status: 'failed', error: 'no GPU', urls }), channel, call)).toMatchObject({
      message: 'Replicate: no GPU',
    });
  });

  it('reads no credit (402) as a dead key and an invalid input (422) as the request’s fault', () => {
    expect(
      replicateAdaptor.failure(
        402,
        JSON.stringify({ title: 'Insufficient credit', detail: 'You have insufficient credit to run this model.', status: 402 }),
      ),
    ).toMatchObject({
      deadKey: true,
      status: 402,
    });
    expect(replicateAdaptor.failure(422, JSON.stringify({ title: 'Input validation failed', detail: 'bad', status: 422 }))).toMatchObject({
      deadKey: false,
      retryable: false,
    });
  });
});
