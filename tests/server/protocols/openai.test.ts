// The OpenAI adaptor over recorded fixtures, and its particulars: paths and
// auth headers from the channel-type row, errors inside a 200, dead keys.
import { describe, expect, it } from 'vitest';
import { openAiAdaptor } from '../../../server/protocols/upstream/openai';
import { operationOfPath } from '../../../server/protocols/shared';
import { isUpstreamFailure, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('openai', openAiAdaptor);

const channel = { type: 1, key: 'sk-fixture-key', baseUrl: '', other: '' };
const targetOf = (config: typeof channel, operation: Parameters<typeof callFor>[0] = 'chat', stream = false) =>
  openAiAdaptor.target(config, callFor(operation, 'gpt-4o', stream)) as HttpTarget;

describe('the OpenAI adaptor', () => {
  it('targets the channel base URL, else the type default, with the operation path under /v1', () => {
    expect(targetOf(channel).url).toBe('https://api.openai.com/v1/chat/completions');
    expect(targetOf({ ...channel, baseUrl: 'http://127.0.0.1:9/' }, 'embeddings').url).toBe('http://127.0.0.1:9/v1/embeddings');
    expect(targetOf({ ...channel, type: 2 }, 'images').url).toBe('https://oa.api2d.net/v1/images/generations');
    expect(targetOf(channel, 'audio_transcription').url).toBe('https://api.openai.com/v1/audio/transcriptions');
    expect(targetOf(channel).headers.authorization).toBe('Bearer sk-fixture-key');
    expect(targetOf(channel, 'chat', true).headers.accept).toBe('text/event-stream');
  });

  it('a Custom channel without a base URL is a failure of that channel, not a crash', () => {
    const target = openAiAdaptor.target({ ...channel, type: 8 }, callFor('chat', 'gpt-4o', false));
    expect(isUpstreamFailure(target)).toBe(true);
  });

  it('knows the operation of each client path', () => {
    expect(operationOfPath('/v1/chat/completions')).toBe('chat');
    expect(operationOfPath('/v1/embeddings?x=1')).toBe('embeddings');
    expect(operationOfPath('/v1/audio/speech')).toBe('audio_speech');
    expect(operationOfPath('/v1/files')).toBeUndefined();
  });

  it('asks a stream for its usage, and keeps every field the client sent', () => {
    const body = JSON.parse(
      openAiAdaptor.encodeChat(
        { model: 'alias', messages: [{ role: 'user', content: 'hi' }], stream: true, logit_bias: { 50256: -100 } },
        callFor('chat', 'gpt-4o', true),
      ),
    );
    expect(body).toEqual({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      logit_bias: { 50256: -100 },
    });
  });

  it('sends reasoning_effort only to a model that reasons, and top_k only to a vendor that takes it', () => {
    const translated = { model: 'alias', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', top_k: 40 };
    const openAi = { type: 1, key: 'sk', baseUrl: '', other: '' };
    const together = { type: 39, key: 'k', baseUrl: '', other: '' };
    expect(JSON.parse(openAiAdaptor.encodeChat(translated, callFor('chat', 'o3-mini', false, openAi)))).toEqual({
      model: 'o3-mini',
      messages: translated.messages,
      reasoning_effort: 'high',
    });
    expect(JSON.parse(openAiAdaptor.encodeChat(translated, callFor('chat', 'gpt-4o', false, openAi)))).toEqual({
      model: 'gpt-4o',
      messages: translated.messages,
    });
    expect(
      JSON.parse(openAiAdaptor.encodeChat(translated, callFor('chat', 'meta-llama/Llama-3.3-70B-Instruct-Turbo', false, together))),
    ).toEqual({
      model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
      messages: translated.messages,
      top_k: 40,
    });
    // the request the caller holds is not changed
    expect(translated).toMatchObject({ reasoning_effort: 'high', top_k: 40 });
  });

  it('sends prompt-cache marks only to a vendor that reads them (OpenRouter), and a user id within 64 characters', () => {
    const marked = { type: 'text', text: 'the long prompt', cache_control: { type: 'ephemeral' } };
    const translated = {
      model: 'alias',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'identity' }, marked] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look at this' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { ...marked, text: 'and this' },
          ],
        },
      ],
      user: 'u'.repeat(65),
    };
    const openAi = { type: 1, key: 'sk', baseUrl: '', other: '' };
    const openRouter = { type: 20, key: 'k', baseUrl: '', other: '' };
    const toOpenAi = JSON.parse(openAiAdaptor.encodeChat(translated, callFor('chat', 'gpt-4o', false, openAi)));
    expect(toOpenAi.messages).toEqual([
      { role: 'system', content: 'identity\n\nthe long prompt' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at this' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'and this' },
        ],
      },
    ]);
    expect(toOpenAi.user).toHaveLength(64);
    expect(toOpenAi.user).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(openAiAdaptor.encodeChat(translated, callFor('chat', 'gpt-4o', false, openAi))).user).toBe(toOpenAi.user);
    const toOpenRouter = JSON.parse(
      openAiAdaptor.encodeChat(translated, callFor('chat', 'anthropic/claude-sonnet-4.5', false, openRouter)),
    );
    expect(toOpenRouter.messages).toEqual(translated.messages);
    expect(
      JSON.parse(openAiAdaptor.encodeChat({ ...translated, user: 'u'.repeat(64) }, callFor('chat', 'gpt-4o', false, openAi))).user,
    ).toBe('u'.repeat(64));
  });

  it('reads an error inside a 200 as the failure OpenAI would have answered', () => {
    const dead = openAiAdaptor.decodeChat(
      JSON.stringify({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }),
      callFor('chat', 'm', false),
    );
    expect(dead).toMatchObject({ status: 401, deadKey: true, retryable: true, code: 'invalid_api_key' });
    const broke = openAiAdaptor.decodeChat(
      JSON.stringify({ error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' } }),
      callFor('chat', 'm', false),
    );
    expect(broke).toMatchObject({ status: 429, deadKey: true });
    const other = openAiAdaptor.decodeChat(
      JSON.stringify({ error: { message: 'odd', type: 'server_error', code: null } }),
      callFor('chat', 'm', false),
    );
    expect(other).toMatchObject({ status: 502, deadKey: false, retryable: true });
  });

  it('classifies failures: dead keys, retryable statuses, request errors', () => {
    const body = (type: string, code: string | null) => JSON.stringify({ error: { message: 'x', type, code } });
    expect(openAiAdaptor.failure(401, body('invalid_request_error', 'account_deactivated'))).toMatchObject({
      deadKey: true,
      retryable: true,
    });
    expect(openAiAdaptor.failure(429, body('insufficient_quota', 'insufficient_quota'))).toMatchObject({ deadKey: true });
    expect(openAiAdaptor.failure(429, body('requests', 'rate_limit_exceeded'))).toMatchObject({ deadKey: false, retryable: true });
    expect(openAiAdaptor.failure(500, 'not json')).toMatchObject({
      status: 500,
      deadKey: false,
      retryable: true,
      message: 'upstream answered HTTP 500',
    });
    expect(openAiAdaptor.failure(400, body('invalid_request_error', 'invalid_value'))).toMatchObject({
      deadKey: false,
      retryable: false,
      type: 'invalid_request_error',
    });
  });

  it("an error event inside a stream is the stream's failure", () => {
    const decoder = openAiAdaptor.decodeChatStream(callFor('chat', 'm', true));
    expect(decoder.push('data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n')).toEqual([]);
    expect(decoder.failure()).toMatchObject({ status: 502, retryable: true });
  });
});
