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
  JSON.parse(replicateAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'hi' }], ...request }, callFor('chat', model, false, channel))) as {
    input: Record<string, unknown>;
    version?: string;
  };
const prediction = (fields: Record<string, unknown>) => JSON.stringify({ id: 'p1', status: 'succeeded', output: ['a'], metrics: { input_token_count: 3, output_token_count: 1 }, ...fields });

describe('replicate adaptor particulars', () => {
  it('is the registered adaptor for the replicate protocol', () => {
    expect(UPSTREAM_ADAPTORS.replicate).toBe(replicateAdaptor);
  });

  it('runs a model by name, or a version through /v1/predictions, in sync mode', () => {
    const byName = replicateAdaptor.target({ ...channel, baseUrl: 'http://127.0.0.1:9/' }, callFor('chat', MODEL, true)) as HttpTarget;
    expect(byName.url).toBe('http://127.0.0.1:9/v1/models/meta/meta-llama-3-8b-instruct/predictions');
    expect(byName.headers).toMatchObject({ Authorization: 'Bearer r8_test', Prefer: 'wait=60' });
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
    expect(replicateAdaptor.decodeChat(prediction({ status: 'processing', output: null }), call)).toMatchObject({ status: 504, code: 'prediction_unfinished' });
  });

  it('takes a model whose output is one string, and streams an empty answer with its finish', () => {
    const call = callFor('chat', MODEL, true, channel);
    const whole = replicateAdaptor.decodeChat(prediction({ output: 'all at once' }), call);
    expect(!isUpstreamFailure(whole) && whole.choices[0].message.content).toBe('all at once');
    const decoder = replicateAdaptor.decodeChatStream(call);
    decoder.push(prediction({ output: [] }));
    const chunks = decoder.end();
    expect(chunks).toHaveLength(1);
    expect(chunks[0].choices[0]).toMatchObject({ finish_reason: 'stop', delta: { role: 'assistant', content: '' } });
    expect(decoder.usage()).toEqual({ promptTokens: 3, completionTokens: 1, cachedPromptTokens: 0 });
  });

  it('reads no credit (402) as a dead key and an invalid input (422) as the request’s fault', () => {
    expect(replicateAdaptor.failure(402, JSON.stringify({ title: 'Insufficient credit', detail: 'You have insufficient credit to run this model.', status: 402 }))).toMatchObject({
      deadKey: true,
      status: 402,
    });
    expect(replicateAdaptor.failure(422, JSON.stringify({ title: 'Input validation failed', detail: 'bad', status: 422 }))).toMatchObject({ deadKey: false, retryable: false });
  });
});
