// The emulator stands in for OpenAI in the relay tests and the benchmark, so its
// framing must match the real API: these checks pin it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

let emulator: OpenAIEmulator;
beforeAll(async () => {
  emulator = await startOpenAIEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const chat = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${emulator.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-good', ...headers },
    body: JSON.stringify(body),
  });

describe('OpenAI emulator', () => {
  it('answers a chat completion with usage', async () => {
    const response = await chat({ model: 'gpt-4', messages: [{ role: 'user', content: 'hello there friend' }] });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4',
      choices: [{ index: 0, message: { role: 'assistant', content: 'word0 word1 word2 word3 word4' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    });
  });

  it('streams SSE frames ending in [DONE], with a usage frame only when asked', async () => {
    const plain = await (
      await chat({ model: 'gpt-4', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'x-emulator-chunks': '3' })
    ).text();
    const frames = plain.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
    expect(plain).not.toContain('"usage"');
    const parsed = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)));
    expect(parsed.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('word0 word1 word2');

    const withUsage = await (
      await chat(
        { model: 'gpt-4', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
        { 'x-emulator-chunks': '3' },
      )
    ).text();
    const usageFrame = withUsage.split('\n\n').filter(Boolean).at(-2)!;
    expect(JSON.parse(usageFrame.slice(6))).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
    });
  });

  it('answers dead keys with OpenAI error objects', async () => {
    const response = await chat({ model: 'gpt-4', messages: [] }, { authorization: 'Bearer sk-dead' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
  });

  it('records requests for assertions', () => {
    expect(emulator.requests.length).toBeGreaterThanOrEqual(4);
    expect(emulator.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
  });
});
