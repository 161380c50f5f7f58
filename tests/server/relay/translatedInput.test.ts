// Hostile or malformed chat requests to channels whose vendor does not speak
// OpenAI: before, an adaptor met a shape it could not read and the client got
// a 500 (or a vendor's refusal dressed up as a 502). Now each is a 400 in
// OpenAI's shape naming the field, nothing reaches the vendor, nothing is
// charged and nothing stays held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator } from '../../support/emulators/anthropic';
import { BAIDU_CHANNELS, startBaiduEmulator } from '../../support/emulators/baidu';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { EmulatedChannel, ProtocolEmulator } from '../../support/emulators/types';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

let harness: RelayHarness;
const vendors: Array<{ name: string; channel: EmulatedChannel; emulator: ProtocolEmulator }> = [];

beforeAll(async () => {
  harness = await startRelayHarness();
  vendors.push({ name: 'anthropic', channel: ANTHROPIC_CHANNELS[0], emulator: await startAnthropicEmulator() });
  vendors.push({ name: 'gemini', channel: GEMINI_CHANNELS[0], emulator: await startGeminiEmulator() });
  vendors.push({ name: 'baidu', channel: BAIDU_CHANNELS[0], emulator: await startBaiduEmulator() });
});
afterAll(async () => {
  await Promise.all(vendors.map((vendor) => vendor.emulator.close()));
  await harness.close();
});

const hi = [{ role: 'user', content: 'hi' }];
/** Each body and the words its refusal must contain. */
const MALFORMED: Array<[Record<string, unknown>, RegExp]> = [
  [{ messages: 'x' }, /messages must be a non-empty array/],
  [{ messages: [] }, /messages must be a non-empty array/],
  [{ messages: [1, 2] }, /messages\[0\] must be an object/],
  [{ messages: [null] }, /messages\[0\] must be an object/],
  [{ messages: [{ content: 'no role' }] }, /messages\[0\]\.role must be a string/],
  [{ messages: [{ role: 'user', content: { weird: 1 } }] }, /messages\[0\]\.content must be a string or an array/],
  [
    { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'not-an-object' }] }] },
    /image_url must be an object with a url/,
  ],
  [{ messages: [{ role: 'assistant', content: null, tool_calls: 'x' }] }, /tool_calls must be an array of function calls/],
  [{ messages: hi, tools: 'x' }, /tools must be an array of function tools/],
  [{ messages: hi, tools: [1] }, /tools must be an array of function tools/],
  [{ messages: hi, stop: 5 }, /stop must be a string or an array of strings/],
  [{ messages: hi, temperature: 'hot' }, /temperature must be a number/],
];

describe.each(['anthropic', 'gemini', 'baidu'])('malformed chat requests to a %s channel', (name) => {
  it('are refused with a 400 naming the field, sent nowhere, charged nothing, held nothing', async () => {
    const vendor = vendors.find((candidate) => candidate.name === name)!;
    await resetRelay(harness);
    const { channel, emulator } = vendor;
    await harness.addChannel({
      name,
      type: channel.type,
      key: channel.key,
      base_url: channel.baseUrl(emulator),
      other: channel.other,
      models: channel.chatModel,
    });
    const before = await harness.balances();
    const sent = emulator.requests.length;
    for (const [body, words] of MALFORMED) {
      for (const stream of [false, true]) {
        const response = await harness.post('/v1/chat/completions', { model: channel.chatModel, stream, ...body });
        const answer = (await response.json()) as { error: { message: string; type: string } };
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(answer.error.type).toBe('invalid_request_error');
        expect(answer.error.message).toMatch(words);
      }
    }
    expect(emulator.requests.length).toBe(sent);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    const held = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow();
    expect(Number(held.held_quota)).toBe(0);
  });
});

describe.each(['anthropic', 'gemini'])("a %s channel's own refusal of a request", (name) => {
  it("reaches the client as a 400 with the vendor's words, not a 502", async () => {
    const vendor = vendors.find((candidate) => candidate.name === name)!;
    await resetRelay(harness);
    const { channel, emulator } = vendor;
    await harness.addChannel({
      name,
      type: channel.type,
      key: channel.key,
      base_url: channel.baseUrl(emulator),
      other: channel.other,
      models: channel.chatModel,
    });
    // a tool result that answers no call: both vendors refuse it as the request's fault
    const response = await harness.post('/v1/chat/completions', {
      model: channel.chatModel,
      messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'r' }],
    });
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error: { message: string; type: string } };
    expect(answer.error.type).toBe('invalid_request_error');
    expect(answer.error.message).not.toMatch(/upstream service failed/);
  });
});
