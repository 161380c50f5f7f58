import { describe, expect, it } from 'vitest';
import { topLevelObjectField } from '../../../server/protocols/inbound/jsonField';

const read = (value: unknown, key = 'usage') =>
  topLevelObjectField(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), key);

describe('topLevelObjectField', () => {
  it('reads a top-level object as JSON.parse would, wherever it sits', () => {
    const usage = { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } };
    expect(read({ id: 'x', usage, choices: [{ message: { content: 'hi' } }] })).toEqual({ found: true, value: usage });
    expect(read({ id: 'x', choices: [], usage })).toEqual({ found: true, value: usage });
    expect(read(`{\n  "usage" :\t {"prompt_tokens": 1}\n}`)).toEqual({ found: true, value: { prompt_tokens: 1 } });
  });

  it('never takes a nested key, a string value or text inside a string', () => {
    const nested = { choices: [{ message: { content: 'x' }, usage: { prompt_tokens: 99 } }], meta: { usage: { prompt_tokens: 98 } } };
    expect(read(nested)).toEqual({ found: false });
    expect(read({ object: 'usage', note: '"usage": {"prompt_tokens": 97}' })).toEqual({ found: false });
    expect(read({ content: 'a \\"usage\\": {} and a quote \\\\', usage: { prompt_tokens: 2 } })).toEqual({
      found: true,
      value: { prompt_tokens: 2 },
    });
  });

  it('handles braces and brackets inside strings of the value itself', () => {
    const usage = { prompt_tokens: 5, note: '} ] { [ "' };
    expect(read({ usage, after: 1 })).toEqual({ found: true, value: usage });
  });

  it('reads multi-byte text around the field', () => {
    const usage = { prompt_tokens: 7, label: 'größe ✓' };
    expect(read({ content: '日本語のテキスト', usage })).toEqual({ found: true, value: usage });
  });

  it('says malformed, not found, when the bytes cannot be read this way', () => {
    expect(read('{"usage": {"prompt_tokens": 1')).toEqual({ malformed: true });
    expect(read('{"content": "never closed')).toEqual({ malformed: true });
    expect(read('{"usage": null}')).toEqual({ malformed: true });
    expect(read('{"id": 1')).toEqual({ malformed: true });
  });

  it('agrees with JSON.parse on strings full of quotes, backslash runs and decoy keys', () => {
    // a small deterministic generator: every string mixes escaped quotes, runs of backslashes and "usage" text
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = ['"', '\\', '\\\\', '\\"', 'usage', '"usage": {"prompt_tokens": 1}', '{', '}', '[', ']', ' ', 'é', 'x'];
    const text = () => Array.from({ length: Math.floor(next() * 12) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
    for (let round = 0; round < 300; round += 1) {
      const document: Record<string, unknown> = { id: text(), choices: [{ message: { content: text(), usage: { prompt_tokens: 99 } } }] };
      if (next() < 0.7) document.usage = { prompt_tokens: round, note: text() };
      document[`k${text()}`] = text();
      const bytes = JSON.stringify(document);
      const parsed = JSON.parse(bytes) as { usage?: unknown };
      expect(read(bytes)).toEqual(parsed.usage === undefined ? { found: false } : { found: true, value: parsed.usage });
    }
  });
});
