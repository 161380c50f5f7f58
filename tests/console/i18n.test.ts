// English and Chinese must offer exactly the same keys, react-admin's own included.
import englishMessages from 'ra-language-english';
import { describe, expect, it } from 'vitest';
import { messages } from './messages';

function keysOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => keysOf(child, prefix ? `${prefix}.${key}` : key));
}

describe('message bundles', () => {
  it('have identical key sets in English and Chinese', () => {
    const english = keysOf(messages.en).sort();
    const chinese = keysOf(messages.zh).sort();
    expect(chinese.filter((key) => !english.includes(key))).toEqual([]);
    expect(english.filter((key) => !chinese.includes(key))).toEqual([]);
  });

  it('cover every react-admin string in Chinese, translated', () => {
    const raKeys = keysOf(englishMessages);
    const chineseKeys = new Set(keysOf(messages.zh));
    expect(raKeys.filter((key) => !chineseKeys.has(key))).toEqual([]);
    expect((messages.zh as any).ra.auth.sign_in).toBe('登录');
  });

  it("carry the spec's exact validation messages in English", () => {
    const app = (messages.en as any).app;
    expect(app.validation.password_short).toBe('password length must not be less than 8');
    expect(app.validation.password_mismatch).toBe('the two passwords entered do not match');
    expect(app.common.loading_page).toBe('loading %{page}...');
  });
});
