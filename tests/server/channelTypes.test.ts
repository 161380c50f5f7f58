// The channel-type table (common/channelTypes.ts): one row per stored number,
// every row usable as configured, and the README's table in step with it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, findChannelType, ownerOfChannelType } from '../../common/channelTypes';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('the channel-type table', () => {
  it('has one row per number and per label', () => {
    expect(new Set(CHANNEL_TYPES.map((type) => type.value)).size).toBe(CHANNEL_TYPES.length);
    expect(new Set(CHANNEL_TYPES.map((type) => type.label)).size).toBe(CHANNEL_TYPES.length);
  });

  it("gives today's providers the numbers later one-api versions gave them, with their hosts and path prefixes", () => {
    const row = (value: number) => findChannelType(value);
    expect(row(24)).toMatchObject({ protocol: 'gemini', defaultBaseUrl: 'https://generativelanguage.googleapis.com', ownedBy: 'google' });
    expect(row(11)).toMatchObject({ protocol: 'gemini', defaultBaseUrl: 'https://generativelanguage.googleapis.com' });
    expect(row(29)).toMatchObject({ protocol: 'openai', defaultBaseUrl: 'https://api.groq.com', pathPrefix: '/openai/v1' });
    expect(row(35)).toMatchObject({ protocol: 'openai', defaultBaseUrl: 'https://api.cohere.ai', pathPrefix: '/compatibility/v1' });
    expect(row(30)).toMatchObject({ protocol: 'openai', defaultBaseUrl: 'http://localhost:11434', baseUrlRequired: false });
    expect(row(50)).toMatchObject({ protocol: 'openai', defaultBaseUrl: '', baseUrlRequired: true });
    expect(row(16)?.other).toEqual({ label: 'app.channel.other_zhipu', fallback: 'v4' });
    expect([20, 25, 28, 36, 39, 44, 45].map((value) => row(value)?.protocol)).toEqual(Array(7).fill('openai'));
    expect([36, 45, 28].map(ownerOfChannelType)).toEqual(['deepseek', 'xai', 'mistralai']);
  });

  it('can reach every type: a default base URL unless one is required (Spark picks its host by version)', () => {
    for (const type of CHANNEL_TYPES) {
      if (type.baseUrlRequired) expect(type.defaultBaseUrl, type.label).toBe('');
      else if (type.protocol !== 'xunfei') expect(type.defaultBaseUrl, type.label).toMatch(/^https?:\/\/[^/]+$/);
      if (type.pathPrefix) expect(type.pathPrefix, type.label).toMatch(/^\/[^/].*[^/]$/);
    }
  });

  it("matches the README's table row for row: number, label, default base URL, balance", () => {
    for (const type of CHANNEL_TYPES) {
      const line = readme.split('\n').find((text) => text.startsWith(`| ${type.value} | ${type.label} |`));
      expect(line, `README row for ${type.value}`).toBeDefined();
      const cells = (line as string).split('|').map((cell) => cell.trim());
      if (type.defaultBaseUrl) expect(cells[4], type.label).toContain(`\`${type.defaultBaseUrl}\``);
      if (type.pathPrefix) expect(cells[4], type.label).toContain(`\`${type.pathPrefix}\``);
      expect(cells[6], type.label).toBe(type.balance ? 'yes' : 'no');
    }
  });
});
