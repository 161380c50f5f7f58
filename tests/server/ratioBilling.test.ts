// A GroupRatio saved through PUT /api/option/ prices the very next relayed
// request: no restart, no cache to wait for.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { computeQuota } from '../../server/relay/billing';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

let harness: RelayHarness;
beforeAll(async () => {
  harness = await startRelayHarness();
});
afterAll(() => harness.close());
beforeEach(() => resetRelay(harness));

async function chargeOfOneRequest(): Promise<number> {
  const before = await harness.balances();
  const response = await harness.post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hello there friend' }] });
  expect(response.status).toBe(200);
  await response.text();
  const after = await harness.balances();
  return before.user.quota - after.user.quota;
}

describe('ratios take effect at once', () => {
  it('bills the next request with a changed GroupRatio, and ModelRatio likewise', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good' });
    // the emulator answers 3 prompt and 5 completion tokens; gpt-4 costs 15 with completions at 2x
    const base = computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 });
    expect(await chargeOfOneRequest()).toBe(base);

    expect(await harness.admin('PUT', '/api/option/', { key: 'GroupRatio', value: '{"default":3,"vip":1,"svip":1}' })).toEqual({ success: true, message: '' });
    expect(await chargeOfOneRequest()).toBe(base * 3);

    const refused = await harness.admin('PUT', '/api/option/', { key: 'GroupRatio', value: '{"default":0.5,' });
    expect(refused).toEqual({ success: false, message: 'group ratio is not a valid JSON string' });
    expect(await chargeOfOneRequest()).toBe(base * 3);

    const modelRatio = { ...harness.app.ctx.options.json('ModelRatio'), 'gpt-4': 30 };
    expect((await harness.admin('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify(modelRatio) })).success).toBe(true);
    expect(await chargeOfOneRequest()).toBe(base * 6);
  });
});
