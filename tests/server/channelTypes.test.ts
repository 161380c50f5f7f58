// The channel-type table (common/channelTypes.ts): one row per stored number,
// every row usable as configured, and the table in docs/channels.md in step with it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, findChannelType, openAiPathPrefix, otherMissing, ownerOfChannelType } from '../../common/channelTypes';
import { importedKey, importedOther, targetChannelType, unrelayedReason } from '../../server/import/products';

const channelsDoc = readFileSync(new URL('../../docs/channels.md', import.meta.url), 'utf8');

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

  it("gives one-api's later OpenAI-compatible types their hosts and prefixes", () => {
    const row = (value: number) => findChannelType(value);
    expect([19, 23, 26, 27, 31, 32, 37, 40, 41, 47, 48, 49, 51].map((value) => row(value)?.protocol)).toEqual(Array(13).fill('openai'));
    expect(row(40)).toMatchObject({ defaultBaseUrl: 'https://ark.cn-beijing.volces.com', pathPrefix: '/api/v3', ownedBy: 'bytedance' });
    expect(row(41)).toMatchObject({ defaultBaseUrl: 'https://api.novita.ai', pathPrefix: '/v3/openai' });
    expect(row(47)).toMatchObject({ defaultBaseUrl: 'https://qianfan.baidubce.com', pathPrefix: '/v2', ownedBy: 'baidu' });
    expect(row(49)).toMatchObject({
      defaultBaseUrl: 'https://dashscope.aliyuncs.com',
      pathPrefix: '/compatible-mode/v1',
      ownedBy: 'alibaba',
    });
    expect(row(51)).toMatchObject({
      defaultBaseUrl: 'https://generativelanguage.googleapis.com',
      pathPrefix: '/v1beta/openai',
      ownedBy: 'google',
    });
    expect(row(23)?.defaultBaseUrl).toBe('https://api.hunyuan.cloud.tencent.com');
    expect(row(48)?.defaultBaseUrl).toBe('https://spark-api-open.xf-yun.com');
  });

  it("fills Cloudflare's account into its path from `other`, else lets a base URL with a path carry it", () => {
    expect(openAiPathPrefix(37, ' abc ', '')).toBe('/client/v4/accounts/abc/ai/v1');
    expect(openAiPathPrefix(37, '', 'https://gateway.ai.cloudflare.com/v1/abc/gw/workers-ai')).toBe('/v1');
    expect(openAiPathPrefix(37, '', 'https://api.cloudflare.com')).toBeUndefined();
    expect(openAiPathPrefix(29, '', '')).toBe('/openai/v1');
    expect(openAiPathPrefix(1, 'anything', '')).toBe('/v1');
    expect([
      otherMissing(37, '', ''),
      otherMissing(37, 'abc', ''),
      otherMissing(37, '', 'https://api.cloudflare.com/client/v4/accounts/abc/ai'),
      otherMissing(3, '', ''),
    ]).toEqual([true, false, false, false]);
  });

  it("maps one-api's and new-api's numbers for these types, and names the ones not relayed yet", () => {
    for (const value of [19, 23, 26, 27, 31, 32, 37, 40, 41, 47, 48, 49, 51]) expect(targetChannelType('one-api', value)).toBe(value);
    // new-api (QuantumNous/new-api constant/channel.go): 19 360, 23 Tencent, 26 ZhipuV4, 31 LingYiWanWu, 35 MiniMax, 39 Cloudflare, 45 VolcEngine, 46 BaiduV2
    const fromNewApi = Object.fromEntries([19, 23, 26, 31, 35, 39, 45, 46].map((value) => [value, targetChannelType('new-api', value)]));
    expect(fromNewApi).toEqual({ 19: 19, 23: 23, 26: 16, 31: 31, 35: 27, 39: 37, 45: 40, 46: 47 });
    expect(targetChannelType('one-api', 43)).toBe(43);
    expect([targetChannelType('one-api', 38), targetChannelType('one-api', 22), targetChannelType('new-api', 22)]).toEqual([38, 22, 22]);
    expect([targetChannelType('one-api', 21), targetChannelType('new-api', 21)]).toEqual([21, 21]);
    // one-api keeps the AI Proxy library id in config.library_id; it is `other` here
    expect(importedOther('one-api', 21, '', '{"library_id":"lib-1"}')).toBe('lib-1');
    // Coze: one-api's 34, new-api's 49; Replicate: one-api's 46, new-api's 56
    expect([targetChannelType('one-api', 34), targetChannelType('new-api', 49)]).toEqual([34, 34]);
    expect([targetChannelType('one-api', 46), targetChannelType('new-api', 56)]).toEqual([46, 46]);
    // AWS: one-api's AWS Claude and new-api's AWS are both type 33 (Bedrock)
    expect([targetChannelType('one-api', 33), targetChannelType('new-api', 33)]).toEqual([33, 33]);
    // one-api v0.6 keeps AWS credentials in `config`: they become the key when the key lacks them
    expect(importedKey('one-api', 33, '', '{"ak":"AKID","sk":"secret","region":"us-west-2"}')).toBe('AKID|secret|us-west-2');
    expect(importedKey('one-api', 33, 'AK|SK|eu-west-1', '{"ak":"AKID","sk":"secret","region":"us-west-2"}')).toBe('AK|SK|eu-west-1');
    expect(importedKey('one-api', 33, '', '{"ak":"AKID","region":"us-west-2"}')).toBe('');
    expect(importedKey('new-api', 33, 'ABSKkey|us-east-1', '{"ak":"AKID","sk":"secret","region":"us-west-2"}')).toBe('ABSKkey|us-east-1');
    expect(importedKey('one-api', 1, 'sk-1', 'not json')).toBe('sk-1');
    // Vertex AI: one-api's 42 and new-api's 41 are type 42 here
    expect([targetChannelType('one-api', 42), targetChannelType('new-api', 41)]).toEqual([42, 42]);
    expect(unrelayedReason('one-api', 99)).toBe('channel type 99 is not relayed yet');
    expect(importedOther('one-api', 37, '', '{"user_id":"acct"}')).toBe('acct');
    expect(importedOther('one-api', 37, 'kept', '{"user_id":"acct"}')).toBe('kept');
    expect(importedOther('one-api', 1, '', '{"user_id":"acct"}')).toBe('');
    expect(importedOther('one-api', 37, '', 'not json')).toBe('');
    // Vertex AI: one-api keeps the key file, region and project in `config`; new-api the key in `key`, the region in `other`
    const keyFile = JSON.stringify({ type: 'service_account', project_id: 'p' }, null, 2);
    const oneApiConfig = JSON.stringify({ region: 'europe-west4', vertex_ai_project_id: 'proj-1', vertex_ai_adc: keyFile });
    expect(importedKey('one-api', 42, '', oneApiConfig)).toBe('{"type":"service_account","project_id":"p"}');
    expect(importedOther('one-api', 42, '', oneApiConfig)).toBe('europe-west4|proj-1');
    expect(importedOther('one-api', 42, 'us-east5', '')).toBe('us-east5');
    expect(importedKey('new-api', 41, keyFile, null)).toBe('{"type":"service_account","project_id":"p"}');
    expect(importedOther('new-api', 41, 'asia-northeast1', null)).toBe('asia-northeast1');
    expect(importedOther('new-api', 41, '{"default":"us-east5","gemini-2.5-pro":"global"}', null)).toBe('us-east5');
    expect(importedKey('one-api', 1, 'sk-x\n', oneApiConfig)).toBe('sk-x\n');
  });

  it('can reach every type: a default base URL unless one is required (Spark picks its host by version, Vertex AI and Bedrock by region)', () => {
    for (const type of CHANNEL_TYPES) {
      if (type.baseUrlRequired) expect(type.defaultBaseUrl, type.label).toBe('');
      else if (type.protocol !== 'xunfei' && type.protocol !== 'vertex' && type.protocol !== 'bedrock')
        expect(type.defaultBaseUrl, type.label).toMatch(/^https?:\/\/[^/]+$/);
      if (type.pathPrefix) expect(type.pathPrefix, type.label).toMatch(/^\/[^/].*[^/]$/);
    }
  });

  it("matches docs/channels.md's table row for row: number, label, default base URL, operations, key, balance", () => {
    const units = { usd: 'USD', cny: 'CNY', cny_per_10000: 'CNY', points: 'points' } as const;
    for (const type of CHANNEL_TYPES) {
      const line = channelsDoc.split('\n').find((text) => text.startsWith(`| ${type.value} | ${type.label} |`));
      expect(line, `docs/channels.md row for ${type.value}`).toBeDefined();
      // a `|` inside a cell is written \|
      const cells = (line as string).split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('\\|', '|'));
      expect(cells, type.label).toHaveLength(9);
      if (type.defaultBaseUrl) expect(cells[4], type.label).toContain(`\`${type.defaultBaseUrl}\``);
      if (type.pathPrefix) expect(cells[4], type.label).toContain(`\`${type.pathPrefix}\``);
      expect(cells[5], type.label).toMatch(type.noChat ? /^embeddings/ : /^(chat|as OpenAI)/);
      if (type.keyFormat) expect(cells[6], type.label).toBe(`\`${type.keyFormat}\``);
      else expect(cells[6], type.label).not.toBe('');
      if (type.balance) {
        expect(cells[7], type.label).toMatch(/^yes: `\/[^`]+`/);
        expect(cells[7], type.label).toContain(units[type.balance.unit]);
        if (type.balance.host) expect(cells[7], type.label).toContain(`\`${type.balance.host}\``);
      } else expect(cells[7], type.label).toBe('no');
    }
  });
});
