import { afterEach, describe, expect, it, vi } from 'vitest';
import { textOfPayload } from '../../../server/protocols/inbound/deltaText';

/** What a full parse of the chunk reads: every choice's delta content, else its text. */
function parsed(payload: string): string {
  try {
    const chunk = JSON.parse(payload) as { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }> };
    return (chunk.choices ?? [])
      .map((choice) =>
        typeof choice.delta?.content === 'string' ? choice.delta.content : typeof choice.text === 'string' ? choice.text : '',
      )
      .join('');
  } catch {
    return '';
  }
}

const openai = (delta: object, extra: object = {}) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    system_fingerprint: 'fp',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    ...extra,
  });

const texts = [
  'Hello',
  '',
  ' world',
  'a "quoted" word',
  'back\\slash and \\"escaped\\"',
  'line\nbreak\ttab\r',
  '{"content":"inner"}',
  '"content":"fake"',
  'ends with a backslash \\',
  '汉字 and 😀 and \u2028',
  'text: "text"',
  '\\\\"',
  '\u0001 control',
];

describe('textOfPayload', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads an ordinary chunk without parsing it, and parses only the string of one with escapes', () => {
    const parse = vi.spyOn(JSON, 'parse');
    expect(textOfPayload(openai({ content: 'Hello' }))).toBe('Hello');
    expect(textOfPayload(openai({ role: 'assistant', content: '' }))).toBe('');
    expect(parse).not.toHaveBeenCalled();
    expect(textOfPayload(openai({ content: 'a\nb' }))).toBe('a\nb');
    expect(parse).toHaveBeenCalledTimes(1);
    expect(parse.mock.calls[0][0]).toBe('"a\\nb"');
  });

  it('reads the same text as a full parse from OpenAI chunks of every content', () => {
    for (const content of texts) {
      for (const payload of [
        openai({ content }),
        openai({ role: 'assistant', content }),
        openai({ content, refusal: null }),
        openai({ role: 'assistant', content, tool_calls: [] }),
      ]) {
        expect(textOfPayload(payload), payload).toBe(parsed(payload));
        expect(textOfPayload(payload)).toBe(content);
      }
    }
  });

  it('reads the same text as a full parse from every other shape', () => {
    const shapes = [
      openai({ content: null }),
      openai({ role: 'assistant' }),
      openai({}),
      openai({ tool_calls: [{ index: 0, function: { arguments: '{"content":"x"}' } }], content: 'after tools' }),
      openai({ content: 'logprobs too' }, {}).replace('"logprobs":null', '"logprobs":{"content":[{"token":"a","logprob":-1}]}'),
      JSON.stringify({
        choices: [
          { index: 0, delta: { content: 'one' } },
          { index: 1, delta: { content: 'two' } },
        ],
      }),
      JSON.stringify({ choices: [{ index: 0, text: 'completion text', finish_reason: null }] }),
      JSON.stringify({ choices: [{ index: 0, text: 'both', delta: { content: 'content' } }] }),
      JSON.stringify({ delta: { content: 'outside the choices' } }),
      JSON.stringify({ choices: [{ index: 0 }], other: { delta: { content: 'not a choice' } } }),
      JSON.stringify({ choices: [{ index: 0, message: { content: 'a message, not a delta' } }] }),
      JSON.stringify({ choices: [{ index: 0, delta: { nested: { content: 'deeper' } } }] }),
      JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }),
      JSON.stringify({ choices: [{ index: 0, delta: { reasoning_content: 'thinking', content: 'said' } }] }),
      '{"choices":[{"index":0,"delta":{"content": "spaced"}}]}',
      '{"choices":[{"index":0,"delta":{"content":"cut off',
      '{"choices":[{"index":0,"delta":{"content":"unterminated}}]}',
      'not json at all',
      '',
      '[DONE]',
    ];
    for (const payload of shapes) expect(textOfPayload(payload), payload).toBe(parsed(payload));
  });

  it('matches a full parse on generated chunks with random text', () => {
    const alphabet = ['a', ' ', '"', '\\', '\n', '{', '}', '[', ']', ',', ':', 'é', '😀', 'content', 'text', 'null'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let round = 0; round < 2000; round += 1) {
      let content = '';
      for (let index = next() % 12; index > 0; index -= 1) content += alphabet[next() % alphabet.length];
      const payload = round % 3 === 0 ? openai({ role: 'assistant', content }) : openai({ content });
      expect(textOfPayload(payload), payload).toBe(content);
    }
  });
});
