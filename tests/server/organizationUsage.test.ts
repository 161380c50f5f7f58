// An organisation's usage (GET /api/organization/:id/usage) after real calls
// relayed through the OpenAI emulator with two members' keys and a service
// key: the owner and admins see every key's, a member their own keys' only,
// another organisation's admin "not found". The figures are checked against
// the consume logs the relay wrote. SQLite only: the reads are the
// dashboard's rollup queries, tested on every database in dashboard.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageTotals } from '../../common/dashboard';
import type { OrganizationUsage } from '../../common/organizationUsage';
import { LogType } from '../../common/roles';
import { asBrowser, login, register } from '../support/app';
import { startRelayHarness, type RelayHarness } from './relay/harness';

let harness: RelayHarness;
let orgId = 0;
const cookies: Record<string, string> = {};
const ids: Record<string, number> = {};
const keys: Record<string, { id: number; key: string }> = {};

type Method = 'GET' | 'POST';
const as = async (who: string, method: Method, url: string, payload?: unknown) =>
  (await asBrowser(harness.app, cookies[who], { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();

/** The last hour up to a minute from now: the calls below are all in it. */
const usageUrl = (id = orgId) => {
  const now = Math.floor(Date.now() / 1000);
  return `/api/organization/${id}/usage?start_timestamp=${now - 3600}&end_timestamp=${now + 60}`;
};

/** The consume logs of these keys, summed as the usage route sums its rollups. */
async function loggedTotals(tokenIds: number[], model?: string): Promise<Omit<UsageTotals, 'errors'>> {
  let query = harness.app.ctx.db
    .selectFrom('logs')
    .select(['quota', 'prompt_tokens', 'completion_tokens'])
    .where('type', '=', LogType.consume)
    .where('token_id', 'in', tokenIds);
  if (model) query = query.where('model_name', '=', model);
  const rows = await query.execute();
  const sum = (column: 'quota' | 'prompt_tokens' | 'completion_tokens') => rows.reduce((total, row) => total + Number(row[column]), 0);
  return { requests: rows.length, quota: sum('quota'), prompt_tokens: sum('prompt_tokens'), completion_tokens: sum('completion_tokens') };
}

const figures = ({ requests, quota, prompt_tokens, completion_tokens }: UsageTotals) => ({
  requests,
  quota,
  prompt_tokens,
  completion_tokens,
});

beforeAll(async () => {
  harness = await startRelayHarness();
  await harness.addChannel({ name: 'emulator', key: 'sk-upstream' });
  for (const name of ['u-owner', 'u-admin', 'u-member', 'u-other']) {
    await register(harness.app, name);
    cookies[name] = await login(harness.app, name, 'password-123');
    ids[name] = Number((await as(name, 'GET', '/api/user/self')).data.id);
  }
  orgId = (await harness.admin('POST', '/api/organization/', { name: 'Usage Co', owner: 'u-owner' })).data.id;
  expect((await as('u-owner', 'POST', `/api/organization/${orgId}/member`, { username: 'u-admin', role: 'admin' })).success).toBe(true);
  expect((await as('u-owner', 'POST', `/api/organization/${orgId}/member`, { username: 'u-member' })).success).toBe(true);
  expect((await harness.admin('POST', `/api/organization/${orgId}/topup`, { quota: 5_000_000 })).success).toBe(true);
  const made = async (who: string, name: string, service = false) => {
    const created = await as(who, 'POST', `/api/organization/${orgId}/token`, { name, unlimited_quota: true, service });
    expect(created.success, created.message).toBe(true);
    return { id: Number(created.data.id), key: String(created.data.key) };
  };
  keys.admin = await made('u-admin', 'admin key');
  keys.member = await made('u-member', 'member key');
  keys.service = await made('u-owner', 'service key', true);
  // the other organisation, whose admin must not read this one's usage
  const other = (await harness.admin('POST', '/api/organization/', { name: 'Other Co', owner: 'u-other' })).data.id;
  expect(other).toBeGreaterThan(0);
  const calls: Array<[string, string, number]> = [
    ['admin', 'gpt-3.5-turbo', 3],
    ['admin', 'gpt-4', 1],
    ['member', 'gpt-3.5-turbo', 2],
    ['service', 'gpt-4', 2],
  ];
  for (const [key, model, times] of calls)
    for (let call = 0; call < times; call += 1) {
      const answer = await harness.post(
        '/v1/chat/completions',
        { model, messages: [{ role: 'user', content: `${key} ${call}` }] },
        `sk-${keys[key].key}`,
      );
      expect(answer.status).toBe(200);
    }
  await harness.settled();
});
afterAll(async () => {
  await harness?.close();
});

describe("an organisation's usage", () => {
  it('gives the owner and admins the totals per member, model and key, as the logs add them up', async () => {
    const answer = await as('u-owner', 'GET', usageUrl());
    expect(answer.success, answer.message).toBe(true);
    const usage = answer.data as OrganizationUsage;
    expect(usage.scope).toBe('organization');
    const all = [keys.admin.id, keys.member.id, keys.service.id];
    expect(figures(usage.totals)).toEqual(await loggedTotals(all));
    expect(usage.totals.requests).toBe(8);
    expect(usage.totals.prompt_tokens).toBeGreaterThan(0);
    expect(usage.totals.completion_tokens).toBeGreaterThan(0);

    expect(usage.by_key.map((row) => [row.token_name, row.member_user_id, row.requests]).sort()).toEqual(
      [
        ['admin key', ids['u-admin'], 4],
        ['member key', ids['u-member'], 2],
        ['service key', 0, 2],
      ].sort(),
    );
    for (const row of usage.by_key) {
      expect(figures(row)).toEqual(await loggedTotals([row.token_id]));
      expect(JSON.stringify(row)).not.toContain(Object.values(keys).find((key) => key.id === row.token_id)!.key);
    }
    // a member's row is their keys'; service keys gather under user 0
    const members = new Map(usage.by_member.map((row) => [row.user_id, row]));
    expect([...members.keys()].sort()).toEqual([0, ids['u-admin'], ids['u-member']].sort());
    expect(members.get(ids['u-admin'])).toMatchObject({ username: 'u-admin', ...(await loggedTotals([keys.admin.id])) });
    expect(members.get(ids['u-member'])).toMatchObject({ username: 'u-member', ...(await loggedTotals([keys.member.id])) });
    expect(members.get(0)).toMatchObject({ username: '', ...(await loggedTotals([keys.service.id])) });

    expect(usage.by_model.map((row) => [row.model, row.requests]).sort()).toEqual([
      ['gpt-3.5-turbo', 5],
      ['gpt-4', 3],
    ]);
    for (const row of usage.by_model) expect(figures(row)).toEqual(await loggedTotals(all, row.model));
    // highest spend first, as on the dashboard
    expect(usage.by_key.map((row) => row.quota)).toEqual([...usage.by_key.map((row) => row.quota)].sort((a, b) => b - a));
    expect((await as('u-admin', 'GET', usageUrl())).data).toEqual(usage);
  });

  it("shows a member their own keys' usage only", async () => {
    const usage = (await as('u-member', 'GET', usageUrl())).data as OrganizationUsage;
    expect(usage.scope).toBe('own');
    expect(figures(usage.totals)).toEqual(await loggedTotals([keys.member.id]));
    expect(usage.by_key.map((row) => row.token_id)).toEqual([keys.member.id]);
    expect(usage.by_member.map((row) => row.user_id)).toEqual([ids['u-member']]);
    expect(usage.by_model.map((row) => [row.model, row.requests])).toEqual([['gpt-3.5-turbo', 2]]);
  });

  it('answers "not found" to an outsider and to another organisation\'s owner, and refuses a bad range', async () => {
    expect(await as('u-other', 'GET', usageUrl())).toMatchObject({ success: false, code: 'not_found' });
    expect(await as('u-admin', 'GET', usageUrl(999_999))).toMatchObject({ success: false, code: 'not_found' });
    const backwards = await as('u-owner', 'GET', `/api/organization/${orgId}/usage?start_timestamp=2000&end_timestamp=1000`);
    expect(backwards).toMatchObject({ success: false, message: 'start must be before end' });
    // a range with nothing in it
    const empty = (await as('u-owner', 'GET', `/api/organization/${orgId}/usage?start_timestamp=3600&end_timestamp=7200`)).data;
    expect(empty).toMatchObject({ totals: { requests: 0, quota: 0 }, by_member: [], by_model: [], by_key: [] });
  });
});
