import { describe, expect, it } from 'vitest';
import { countChatPromptTokens, countInputTokens, countTextTokens } from '../../../server/protocols/inbound/tokenCount';

describe('local token counting', () => {
  it('counts with the cl100k tokenizer', () => {
    expect(countTextTokens('hello world', 'gpt-3.5-turbo')).toBe(2);
    expect(countTextTokens('', 'gpt-4')).toBe(0);
  });

  it('approximates from UTF-8 bytes when asked', () => {
    expect(countTextTokens('x'.repeat(100), 'gpt-4', { approximate: true })).toBe(38);
  });

  it('follows OpenAI chat accounting, multi-part content included', () => {
    // 3 + tokens("hello world")=2 + tokens("user")=1, + 3 primer = 9
    expect(countChatPromptTokens([{ role: 'user', content: 'hello world' }], 'gpt-4')).toBe(9);
    const parts = [{ role: 'user', content: [{ type: 'text', text: 'hello world' }] }];
    expect(countChatPromptTokens(parts, 'gpt-4')).toBe(9);
    // an image of unknown size at high detail: the most a gpt-4-family image costs, 85 + 8 tiles of 170
    const withImage = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hello world' },
          { type: 'image_url', image_url: { url: 'https://example.test/x.png' } },
        ],
      },
    ];
    expect(countChatPromptTokens(withImage, 'gpt-4')).toBe(9 + 1 + 85 + 8 * 170); // and one for the part itself
    const lowDetail = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hello world' },
          { type: 'image_url', image_url: { url: 'https://example.test/x.png', detail: 'low' } },
        ],
      },
    ];
    expect(countChatPromptTokens(lowDetail, 'gpt-4')).toBe(9 + 1 + 85);
  });

  it('counts array prompts instead of treating them as free', () => {
    expect(countInputTokens(['hello world', 'hello world'], 'text-embedding-ada-002')).toBe(4);
    // token ids are a token each, alone, in an array, or in arrays of arrays
    expect(countInputTokens(42, 'text-embedding-ada-002')).toBe(1);
    expect(countInputTokens([1, 2, 3], 'text-embedding-ada-002')).toBe(3);
    expect(
      countInputTokens(
        [
          [1, 2, 3],
          [4, 5],
        ],
        'text-embedding-ada-002',
      ),
    ).toBe(5);
    expect(countInputTokens({ not: 'a prompt' }, 'text-embedding-ada-002')).toBe(0);
  });
});
