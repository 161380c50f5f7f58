// The money fuzzer for realtime frames (moneyFuzz.test.ts covers the HTTP
// protocols): sessions of hostile client events (session.update with
// instructions and tools of any size and shape, conversation items carrying
// text anywhere, response.create with inline instructions, input and tools,
// numbers of thousands of digits) go through the real gateway to the realtime
// emulator in its honest mode (tests/support/emulators/realtime.ts: every
// field the client sent billed by OpenAI's tokenizer, every response as long
// as its limit allows). Each session runs on a key with a small balance
// (from 20,000 quota, too little for most, to 2,000,000); the
// gateway must refuse what the balance cannot hold, and afterwards the key
// is never below zero, holds nothing, and its logs add up to its spend.
// MONEY_FUZZ_RUNS / 10 sessions (20 in CI, each of up to 6 events);
// MONEY_FUZZ_SEED explores others.
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_GOOD_KEY, startRealtimeEmulator, type RealtimeEmulator } from '../../support/emulators/realtime';
import { hostileJson, hostileObject, hostileValue, text } from '../../support/hostileJson';
import { loggedSpend, startRelayHarness, type RelayHarness } from './harness';

const SESSIONS = Math.max(5, Math.round(Number(process.env.MONEY_FUZZ_RUNS ?? 200) / 10));
const SEED = Number(process.env.MONEY_FUZZ_SEED ?? 20261129);
const MODEL = 'gpt-4o-realtime-preview';

const functionTool = fc.record({
  type: fc.constant('function'),
  name: fc.stringMatching(/^[a-z_]{1,20}$/),
  description: text,
  parameters: hostileValue,
});
const item = fc.record({
  type: fc.constant('message'),
  role: fc.constantFrom('user', 'system'),
  content: fc.array(
    fc.oneof({ weight: 3, arbitrary: fc.record({ type: fc.constant('input_text'), text }) }, { weight: 1, arbitrary: hostileObject }),
    { minLength: 1, maxLength: 3 },
  ),
});

/** One client event of a session. */
const event: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc
    .record({ instructions: text, tools: fc.array(functionTool, { maxLength: 2 }), extra: hostileValue }, { requiredKeys: [] })
    .map((session) => ({ type: 'session.update', session })),
  item.map((created) => ({ type: 'conversation.item.create', item: created })),
  fc
    .record(
      {
        instructions: text,
        input: fc.array(item, { maxLength: 2 }),
        tools: fc.array(functionTool, { maxLength: 2 }),
        max_output_tokens: fc.integer({ min: 1, max: 64 }),
        modalities: fc.constantFrom(['text'], ['text', 'audio']),
        metadata: hostileValue,
      },
      { requiredKeys: ['max_output_tokens'] },
    )
    .map((response) => ({ type: 'response.create', response })),
);

let harness: RelayHarness;
let upstream: RealtimeEmulator;

beforeAll(async () => {
  upstream = await startRealtimeEmulator({ honest: true });
  upstream.deltaMs = 0;
  harness = await startRelayHarness();
  await harness.addChannel({ name: 'realtime honest', type: 1, key: REALTIME_GOOD_KEY, base_url: upstream.baseUrl, models: MODEL });
});
afterAll(async () => {
  await harness?.close();
  await upstream?.close();
});

/** Runs the events on a new session with `key`; each response.create waits for its response.done or its error. */
async function runSession(key: string, events: Array<Record<string, unknown>>): Promise<{ answered: number; refused: number }> {
  const socket = new WebSocket(`${harness.baseUrl.replace('http:', 'ws:')}/v1/realtime?model=${MODEL}`, {
    headers: { authorization: `Bearer ${key}`, 'openai-beta': 'realtime=v1' },
  });
  const received: Array<Record<string, unknown>> = [];
  // the gateway may close first (a response it cannot hold ends the session with 1008)
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('message', (data, isBinary) => {
    if (!isBinary) received.push(JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>);
  });
  const opened = await new Promise<boolean>((resolve) => {
    socket.once('open', () => resolve(true));
    // a balance that cannot pay for one short response is refused at the upgrade
    socket.once('unexpected-response', () => resolve(false));
    socket.once('error', () => resolve(false));
  });
  if (!opened) {
    socket.terminate();
    return { answered: 0, refused: 1 };
  }
  const waitFor = async (done: () => boolean) => {
    for (let waited = 0; waited < 10_000 && !done() && socket.readyState === WebSocket.OPEN; waited += 5)
      await new Promise((resolve) => setTimeout(resolve, 5));
  };
  await waitFor(() => received.some((each) => each.type === 'session.created'));
  let answered = 0;
  let refused = 0;
  for (const each of events) {
    if (socket.readyState !== WebSocket.OPEN) break;
    const mark = received.length;
    socket.send(hostileJson(each));
    if (each.type !== 'response.create') continue;
    await waitFor(() => received.slice(mark).some((seen) => seen.type === 'response.done' || seen.type === 'error'));
    const outcome = received.slice(mark).find((seen) => seen.type === 'response.done' || seen.type === 'error');
    if (outcome?.type === 'response.done') answered += 1;
    else refused += 1;
  }
  if (socket.readyState === WebSocket.OPEN) socket.close(1000);
  await closed;
  return { answered, refused };
}

describe('realtime: a hostile session never spends more than its key holds', () => {
  it(`${SESSIONS} generated sessions, each on a key of 20,000 to 2,000,000 quota`, async () => {
    const started = performance.now();
    let answered = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 20_000, max: 2_000_000 }),
        async (events, balance) => {
          const created = await harness.admin('POST', '/api/token/', { name: 'realtime fuzz', remain_quota: balance });
          expect(created.success, created.message).toBe(true);
          const outcome = await runSession(`sk-${created.data.key}`, events);
          answered += outcome.answered;
          refused += outcome.refused;
          // the session's settlements are written once the gateway has seen the close too
          let token = { remain_quota: 0, held_quota: -1 };
          for (let waited = 0; waited < 10_000; waited += 20) {
            await harness.settled();
            token = await harness.app.ctx.db
              .selectFrom('tokens')
              .select(['remain_quota', 'held_quota'])
              .where('id', '=', created.data.id)
              .executeTakeFirstOrThrow();
            if (Number(token.held_quota) === 0) break;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          const logged = await loggedSpend(harness, created.data.id);
          expect(Number(token.held_quota), JSON.stringify(events).slice(0, 300)).toBe(0);
          expect(Number(token.remain_quota), JSON.stringify(events).slice(0, 300)).toBeGreaterThanOrEqual(0);
          expect(balance - logged).toBe(Number(token.remain_quota));
        },
      ),
      { seed: SEED, numRuns: SESSIONS, endOnFailure: true },
    );
    console.log(
      `money fuzz, realtime: ${SESSIONS} sessions (${answered} responses answered, ${refused} refused or failed) in ${((performance.now() - started) / 1000).toFixed(1)} s, seed ${SEED}`,
    );
    // the generator must reach the upstream, or it proves nothing about the bills
    expect(answered).toBeGreaterThan(SESSIONS / 5);
  }, 600_000);
});
