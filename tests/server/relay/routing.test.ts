// Routing that does not flap: a channel answering 429 rests (a cooldown that
// ends by itself) instead of being disabled; consecutive failures open its
// breaker, which lets one probe through once it has waited and closes when
// the probe is answered; a request goes on to the next channel only for the
// statuses the operator marks retryable; a group's fallback models answer
// when no channel of the asked model can, and the log names the model that
// did; a caller naming itself keeps its channel (and key) while affinity is
// on; a multi-key channel's key that answers 429 rests alone. Real gateway on
// each database, the OpenAI emulator upstream (its keys choose its failures:
// sk-busy answers 429, sk-down 500, sk-slow answers late), and the routing
// book's clock moved by the test instead of waiting out each rest.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelStatus } from '../../../common/roles';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { relayContextOf } from '../../../server/plugins/relayContext';
import type { RoutingBook } from '../../../server/relay/routing';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { lastConsumeLog, resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('routing', { besideSqlite: 'mysql' });

const ROUTING_DEFAULTS: Record<string, string> = {
  ChannelCooldownSeconds: '5',
  ChannelCooldownMaxSeconds: '300',
  CircuitBreakerFailures: '5',
  CircuitBreakerWindowSeconds: '60',
  CircuitBreakerOpenSeconds: '30',
  RetryableStatusCodes: '408,429,500-599',
  ModelFallbacks: '{}',
  RoutingAffinitySeconds: '0',
  RoutingAffinityHeader: '',
};

async function setOptions(harness: RelayHarness, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) await harness.app.ctx.options.set(key as never, value);
}

/** The keys the emulator was called with since `from`, in order. */
const keysSince = (harness: RelayHarness, from: number) =>
  harness.emulator.requests.slice(from).map((request) => String(request.headers.authorization).replace(/^Bearer /, ''));

// a small output limit keeps each hold small: these tests are about routing, and two clean-clone runs under load
// saw the key's 10,000,000 refused for quota in the affinity test, with holds of a whole gpt-4 answer each
const chat = (harness: RelayHarness, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  harness.post(
    '/v1/chat/completions',
    { model: 'gpt-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }], ...extra },
    undefined,
    headers,
  );

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/** A chat answered 200; another status fails with the answer's body, which says which refusal it was. */
async function expectAnswered(answer: Promise<Response>): Promise<void> {
  const response = await answer;
  expect({ status: response.status, body: response.status === 200 ? '' : await response.text() }).toEqual({ status: 200, body: '' });
}

for (const target of targets) {
  describe.runIf(target.available)(`routing that does not flap on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness | undefined;
    let book: RoutingBook;
    /** The routing book's clock: moved by the tests. */
    let now = Date.now();
    const harnessOf = () => harness!;
    /** Moves the routing clock on, as if `ms` had passed. */
    const pass = (ms: number) => {
      now += ms;
    };

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      book = relayContextOf(harness.app, bookkeepingFor(harness.app.ctx, harness.app.log)).routing;
      book.clock = () => now;
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });
    beforeEach(() => resetRelay(harness!));
    afterEach(async () => {
      await setOptions(harnessOf(), ROUTING_DEFAULTS);
      await harnessOf().settled();
    });

    it('rests a channel that answered 429 instead of disabling it, passes it by meanwhile, and takes it back once the rest is over', async () => {
      const harness = harnessOf();
      await setOptions(harness, { ChannelCooldownSeconds: '1.5', AutomaticDisableChannelEnabled: 'true' });
      const busy = await harness.addChannel({ name: 'busy', key: 'sk-busy', priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      const from = harness.emulator.requests.length;

      // RetryTimes is 0: the client hears the 429, and the channel rests
      expect((await chat(harness)).status).toBe(429);
      // resting, the higher-priority channel is passed by: the spare answers
      expect((await chat(harness)).status).toBe(200);
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, from)).toEqual(['sk-busy', 'sk-spare', 'sk-spare']);
      const row = await harness.app.ctx.db.selectFrom('channels').select(['status']).where('id', '=', busy).executeTakeFirstOrThrow();
      expect(row.status).toBe(ChannelStatus.enabled);

      // the rest ends by itself: the first choice is asked again (and rests twice as long after a second 429)
      pass(1600);
      const second = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(429);
      expect((await chat(harness)).status).toBe(200);
      pass(1600);
      // 1.6 s after the second 429 it still rests: the doubled rest (3 s) has not run out
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, second)).toEqual(['sk-busy', 'sk-spare', 'sk-spare']);
    });

    it('moves on to the next channel within the request when retries are allowed', async () => {
      const harness = harnessOf();
      await setOptions(harness, { RetryTimes: '1' });
      await harness.addChannel({ name: 'busy', key: 'sk-busy', priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      const from = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, from)).toEqual(['sk-busy', 'sk-spare']);
    });

    it('sends a request to a resting channel when no other can take it, so one channel answers as its upstream does', async () => {
      const harness = harnessOf();
      await harness.addChannel({ name: 'only', key: 'sk-busy' });
      const from = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(429);
      expect((await chat(harness)).status).toBe(429);
      expect(keysSince(harness, from)).toEqual(['sk-busy', 'sk-busy']);
    });

    it('opens the breaker after consecutive failures, lets one probe through after the wait, and closes it when the probe is answered', async () => {
      const harness = harnessOf();
      await setOptions(harness, { RetryTimes: '1', CircuitBreakerFailures: '2', CircuitBreakerOpenSeconds: '1' });
      const flaky = await harness.addChannel({ name: 'flaky', key: 'sk-down', priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      const from = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect((await chat(harness)).status).toBe(200);
      // two failures in a row: the breaker is open and the flaky channel is not asked
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, from)).toEqual(['sk-down', 'sk-spare', 'sk-down', 'sk-spare', 'sk-spare']);

      // after the wait, one probe: it fails, so the breaker opens again at once
      pass(1050);
      const probe = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, probe)).toEqual(['sk-down', 'sk-spare', 'sk-spare']);

      // the upstream is mended: the next probe is answered and the channel takes the traffic again
      expect((await harness.admin('PUT', '/api/channel/', { id: flaky, key: 'sk-mended' })).success).toBe(true);
      pass(1050);
      const mended = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, mended)).toEqual(['sk-mended', 'sk-mended']);
    });

    it('lets only one probe through a half-open breaker while others wait', async () => {
      const harness = harnessOf();
      await setOptions(harness, { CircuitBreakerFailures: '1', CircuitBreakerOpenSeconds: '1' });
      const flaky = await harness.addChannel({ name: 'flaky', key: 'sk-down', priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      expect((await chat(harness)).status).toBe(500);
      expect((await harness.admin('PUT', '/api/channel/', { id: flaky, key: 'sk-slow' })).success).toBe(true);
      pass(1050);
      const from = harness.emulator.requests.length;
      // the slow probe holds the half-open breaker: the four requests beside it go to the spare
      const answers = await Promise.all(Array.from({ length: 5 }, (_, index) => sleep(index * 20).then(() => chat(harness))));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      const keys = keysSince(harness, from);
      expect(keys.filter((key) => key === 'sk-slow')).toHaveLength(1);
      expect(keys.filter((key) => key === 'sk-spare')).toHaveLength(4);
    });

    it('retries on another channel only for the statuses the operator lists', async () => {
      const harness = harnessOf();
      await setOptions(harness, { RetryTimes: '1', RetryableStatusCodes: '429' });
      await harness.addChannel({ name: 'down', key: 'sk-down', priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      const from = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(500);
      expect(keysSince(harness, from)).toEqual(['sk-down']);

      await setOptions(harness, { RetryableStatusCodes: '500-599' });
      await sleep(0);
      const next = harness.emulator.requests.length;
      // the down channel failed once more: still under the breaker's five, so it is asked first again
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, next)).toEqual(['sk-down', 'sk-spare']);

      // a list that is not statuses is refused with a clear message, and the saved one stays
      const refused = await harness.admin('PUT', '/api/option/', { key: 'RetryableStatusCodes', value: '429,5xx' });
      expect(refused).toMatchObject({
        success: false,
        message: 'retryable statuses must be HTTP statuses or ranges, such as 408,429,500-599',
      });
      expect(harness.app.ctx.options.get('RetryableStatusCodes')).toBe('500-599');
    });

    it("answers from the group's fallback model when no channel of the asked one can, bills the asked model and logs the one that answered", async () => {
      const harness = harnessOf();
      await setOptions(harness, { ModelFallbacks: JSON.stringify({ default: { 'gpt-4': ['gpt-3.5-turbo'] } }) });
      const down = await harness.addChannel({ name: 'gpt-4 down', key: 'sk-down', models: 'gpt-4' });
      await harness.addChannel({ name: 'turbo', key: 'sk-turbo', models: 'gpt-3.5-turbo' });
      const from = harness.emulator.requests.length;
      const answer = await chat(harness);
      expect(answer.status).toBe(200);
      expect(harness.emulator.requests.slice(from).map((request) => (request.body as { model: string }).model)).toEqual([
        'gpt-4',
        'gpt-3.5-turbo',
      ]);
      await harness.settled();
      const log = await lastConsumeLog(harness);
      expect(log.model_name).toBe('gpt-4');
      expect(JSON.parse(String(log.other))).toMatchObject({ fallbackModel: 'gpt-3.5-turbo', retries: 1 });

      // no channel of gpt-4 at all: the fallback answers at once
      expect((await harness.admin('DELETE', `/api/channel/${down}`)).success).toBe(true);
      const direct = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, direct)).toEqual(['sk-turbo']);

      // a fallback list that names the model itself, or is not lists, is refused
      const refused = await harness.admin('PUT', '/api/option/', { key: 'ModelFallbacks', value: '{"default": {"gpt-4": ["gpt-4"]}}' });
      expect(refused.success).toBe(false);
      expect(refused.message).toMatch(/model fallbacks must be/);
    });

    it('keeps a caller on the channel that served it while affinity is on, by its `user` or by a header', async () => {
      const harness = harnessOf();
      await harness.addChannel({ name: 'one', key: 'sk-one' });
      await harness.addChannel({ name: 'two', key: 'sk-two' });
      await setOptions(harness, { RoutingAffinitySeconds: '60' });
      for (const caller of ['alice', 'bob', 'carol']) {
        const from = harness.emulator.requests.length;
        for (let index = 0; index < 8; index += 1) await expectAnswered(chat(harness, { user: caller }));
        expect(new Set(keysSince(harness, from)).size).toBe(1);
      }
      await setOptions(harness, { RoutingAffinityHeader: 'x-session-id' });
      const from = harness.emulator.requests.length;
      for (let index = 0; index < 8; index += 1)
        await expectAnswered(chat(harness, { user: `changing-${index}` }, { 'x-session-id': 'session-7' }));
      expect(new Set(keysSince(harness, from)).size).toBe(1);

      // without affinity the same caller is spread by weight over both channels
      await setOptions(harness, { RoutingAffinitySeconds: '0' });
      const spread = harness.emulator.requests.length;
      for (let index = 0; index < 24; index += 1) await expectAnswered(chat(harness, { user: 'alice' }));
      expect(new Set(keysSince(harness, spread)).size).toBe(2);
    });

    /** A multi-key channel of the emulator holding `keys`, taken in turn. */
    const createPool = async (keys: string[], fields: Record<string, unknown> = {}) => {
      const created = await harnessOf().admin('POST', '/api/channel/', {
        name: 'pool',
        type: 8,
        base_url: harnessOf().emulator.baseUrl,
        models: 'gpt-4',
        group: 'default',
        key: keys.join('\n'),
        multi_key: true,
        key_strategy: 'round_robin',
        ...fields,
      });
      expect(created).toMatchObject({ success: true });
      return created.data.ids[0] as number;
    };

    it("rests a multi-key channel's key that answered 429 alone, and the whole channel once every live key rests", async () => {
      const harness = harnessOf();
      await setOptions(harness, { RetryTimes: '1' });
      const pool = await createPool(['sk-busy', 'sk-pool-good'], { priority: 10 });
      const from = harness.emulator.requests.length;
      // whichever key comes first, the request is answered; the busy key rests and the good one takes the rest
      for (let index = 0; index < 4; index += 1) expect((await chat(harness)).status).toBe(200);
      const keys = keysSince(harness, from);
      expect(keys.filter((key) => key === 'sk-busy')).toHaveLength(1);
      expect(keys.filter((key) => key === 'sk-pool-good')).toHaveLength(4);
      expect(book.stateOf(pool)).toBeUndefined();

      // a pool whose every key answers 429: its keys rest, then the channel, and a spare channel answers meanwhile
      await harness.admin('DELETE', `/api/channel/${pool}`);
      const busy = await createPool(['sk-busy', 'sk-busy-too'], { priority: 10 });
      await harness.addChannel({ name: 'spare', key: 'sk-spare', priority: 0 });
      await setOptions(harness, { RetryTimes: '2' });
      const second = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, second).sort()).toEqual(['sk-busy', 'sk-busy-too', 'sk-spare']);
      expect(book.stateOf(busy)?.restingUntil).toBeGreaterThan(now);
      const third = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, third)).toEqual(['sk-spare']);
      // once the keys' rest is over the pool is asked again
      pass(5_100);
      const fourth = harness.emulator.requests.length;
      expect((await chat(harness)).status).toBe(200);
      expect(keysSince(harness, fourth)[0]).toMatch(/^sk-busy/);
    });

    it('keeps a caller on the same key of a multi-key channel while affinity is on', async () => {
      const harness = harnessOf();
      await createPool(['sk-pool-a', 'sk-pool-b', 'sk-pool-c']);
      await setOptions(harness, { RoutingAffinitySeconds: '60' });
      const from = harness.emulator.requests.length;
      for (let index = 0; index < 6; index += 1) expect((await chat(harness, { user: 'dave' })).status).toBe(200);
      expect(new Set(keysSince(harness, from)).size).toBe(1);
      // without a caller's name the pool goes round its keys
      const spread = harness.emulator.requests.length;
      for (let index = 0; index < 6; index += 1) expect((await chat(harness)).status).toBe(200);
      expect(new Set(keysSince(harness, spread)).size).toBe(3);
      // the affinity lasts its time, then the caller is placed anew
      pass(61_000);
      expect(book.affinityOf(`default\0gpt-4\0dave`)).toBeUndefined();
    });
  });
}
