// Per-token and per-user limits on relayed requests in flight (finding 4: one
// token's thousand streams starved everyone). Over the limit a request gets a
// quick 429 too_many_concurrent_requests with Retry-After and nothing is
// reserved; the defaults come from the options, a token or user may carry its
// own limit (0 = default, -1 = none; for a token, its user's), a token's never
// above its user's, and every way a request ends gives its place back.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { concurrencyLimiter } from '../../../server/plugins/relayContext';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

describe('concurrent requests per token and per user', () => {
  let harness: RelayHarness;

  beforeAll(async () => {
    harness = await startRelayHarness();
  });
  afterAll(() => harness?.close());
  beforeEach(async () => {
    await resetRelay(harness);
    await harness.app.ctx.options.set('TokenConcurrencyLimit', '64');
    await harness.app.ctx.options.set('UserConcurrencyLimit', '128');
    await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 0 });
    await harness.addChannel({ name: 'emulator', key: 'sk-good' });
  });

  const slow = {
    model: 'gpt-3.5-turbo',
    stream: true,
    max_tokens: 20,
    emulator: { chunks: 6, delay_ms: 150 },
    messages: [{ role: 'user', content: 'slowly' }],
  };
  const quick = { model: 'gpt-3.5-turbo', max_tokens: 20, messages: [{ role: 'user', content: 'quickly' }] };
  const limiter = () => concurrencyLimiter(harness.app);
  const held = async () => {
    const user = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow();
    const token = await harness.app.ctx.db
      .selectFrom('tokens')
      .select(['held_quota', 'remain_quota'])
      .where('id', '=', harness.tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(user.held_quota), token: Number(token.held_quota), remain: Number(token.remain_quota) };
  };
  /** Opens streams and waits for their first bytes, so each holds its place. */
  const holdStreams = async (count: number, key?: string) => {
    const responses = await Promise.all(Array.from({ length: count }, () => harness.post('/v1/chat/completions', slow, key)));
    for (const response of responses) expect(response.status).toBe(200);
    return () => Promise.all(responses.map((response) => response.text()));
  };
  const newToken = async (name: string) => {
    const created = await harness.admin('POST', '/api/token/', { name, remain_quota: 1_000_000 });
    return { key: `sk-${created.data.key}`, id: Number(created.data.id) };
  };

  it('answers 429 with Retry-After past the option limit of a token, reserving nothing, and admits again once one ends', async () => {
    await harness.app.ctx.options.set('TokenConcurrencyLimit', '2');
    const finish = await holdStreams(2);
    const before = await held();
    expect(before.token).toBeGreaterThan(0);
    // refused at once, not queued for a place: a queue would have answered 200 once a stream ended, and the two
    // streams still hold what they held (below). No measured time, which a loaded machine stretches
    const refused = await harness.post('/v1/chat/completions', quick);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      code: 'too_many_concurrent_requests',
      type: 'rate_limit_error',
    });
    expect(await held()).toEqual(before);
    await finish();
    expect((await harness.post('/v1/chat/completions', quick)).status).toBe(200);
    await harness.settled();
    expect(limiter().byToken.size).toBe(0);
  });

  it("counts all of a user's tokens together against the user limit", async () => {
    await harness.app.ctx.options.set('UserConcurrencyLimit', '3');
    const second = await newToken('second');
    const finishFirst = await holdStreams(2);
    const finishSecond = await holdStreams(1, second.key);
    const refused = await harness.post('/v1/chat/completions', quick, second.key);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('your account');
    await Promise.all([finishFirst(), finishSecond()]);
  });

  it('lets a token carry its own limit: a number, or -1 for none', async () => {
    await harness.app.ctx.options.set('TokenConcurrencyLimit', '1');
    let finish = await holdStreams(1);
    expect((await harness.post('/v1/chat/completions', quick)).status).toBe(429);
    await finish();

    const unlimited = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: -1 });
    expect(unlimited.data.concurrency_limit).toBe(-1);
    finish = await holdStreams(3);
    expect((await harness.post('/v1/chat/completions', quick)).status).toBe(200);
    await finish();

    await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 2 });
    finish = await holdStreams(2);
    expect((await harness.post('/v1/chat/completions', quick)).status).toBe(429);
    await finish();
  });

  it("refuses a key's limit above its user's limit in effect, on creation and on edit, and takes one at or below it", async () => {
    await harness.app.ctx.options.set('UserConcurrencyLimit', '3');
    const created = await harness.admin('POST', '/api/token/', { name: 'wide', concurrency_limit: 4 });
    expect(created).toMatchObject({
      success: false,
      message: "a key's concurrency limit may be at most its account's, 3; -1 gives the key the account's limit",
    });
    const raised = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 4 });
    expect(raised.success).toBe(false);
    expect(raised.message).toContain('at most its account');
    for (const allowed of [3, 1, 0, -1]) {
      const saved = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: allowed });
      expect(saved.success, String(allowed)).toBe(true);
      expect(saved.data.concurrency_limit).toBe(allowed);
    }

    // the user's own limit, set by an admin, is the ceiling when there is one
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: 2 });
    expect((await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 3 })).success).toBe(false);
    // a user without a limit (theirs -1, and none by default) may give a key any
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: -1 });
    expect((await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 500 })).success).toBe(true);
    // lowered since: an edit of another field still saves, the key's limit as it was
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: 2 });
    const renamed = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, name: 'renamed' });
    expect(renamed).toMatchObject({ success: true, data: { name: 'renamed', concurrency_limit: 500 } });
    await harness.admin('PUT', '/api/token/', { id: harness.tokenId, name: 'relay' });
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: 0 });
  });

  it("never lets a key's requests in flight exceed its user's limit: -1 on the key means the user's, and a key saved above a since-lowered limit follows it down", async () => {
    await harness.app.ctx.options.set('TokenConcurrencyLimit', '64');
    await harness.app.ctx.options.set('UserConcurrencyLimit', '2');
    await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: -1 });
    let finish = await holdStreams(2);
    let refused = await harness.post('/v1/chat/completions', quick);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'this API key already has 2 requests in flight',
    );
    await finish();

    await harness.app.ctx.options.set('UserConcurrencyLimit', '10');
    expect((await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: 8 })).success).toBe(true);
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: 2 });
    finish = await holdStreams(2);
    refused = await harness.post('/v1/chat/completions', quick);
    expect(refused.status).toBe(429);
    expect(limiter().byToken.get(harness.tokenId)).toBe(2);
    await finish();
    await harness.admin('PUT', '/api/user/', { id: 1, concurrency_limit: 0 });
  });

  it('lets an admin give a user a limit of their own', async () => {
    const rootId = (await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id;
    const saved = await harness.admin('PUT', '/api/user/', { id: rootId, concurrency_limit: 1 });
    expect(saved.success).toBe(true);
    expect((await harness.admin('GET', `/api/user/${rootId}`)).data.concurrency_limit).toBe(1);
    const finish = await holdStreams(1);
    const refused = await harness.post('/v1/chat/completions', quick);
    expect(refused.status).toBe(429);
    await finish();
    await harness.admin('PUT', '/api/user/', { id: rootId, concurrency_limit: 0 });
  });

  it('refuses limits that are not whole numbers from -1', async () => {
    for (const bad of [-2, 1.5, 'many', 2_000_000]) {
      const token = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, concurrency_limit: bad });
      expect(token.success, String(bad)).toBe(false);
      const rootId = 1;
      const user = await harness.admin('PUT', '/api/user/', { id: rootId, concurrency_limit: bad });
      expect(user.success, String(bad)).toBe(false);
    }
    const created = await harness.admin('POST', '/api/token/', { name: 'bad', concurrency_limit: -5 });
    expect(created.success).toBe(false);
  });

  it('gives every place back after successes, failures, refusals and clients that leave', async () => {
    await harness.addChannel({ name: 'down', key: 'sk-down', models: 'gpt-4', priority: 5 });
    const key = harness.apiKey;
    const calls: Array<Promise<unknown>> = [];
    for (let round = 0; round < 4; round += 1) {
      calls.push(harness.post('/v1/chat/completions', quick).then((response) => response.text())); // answered
      calls.push(
        harness.post('/v1/chat/completions', { ...slow, emulator: { chunks: 3, delay_ms: 20 } }).then((response) => response.text()),
      ); // streamed
      calls.push(harness.post('/v1/chat/completions', { ...quick, model: 'gpt-4' }).then((response) => response.text())); // upstream 500
      calls.push(harness.post('/v1/chat/completions', { messages: [] }).then((response) => response.text())); // no model: 400
      calls.push(harness.post('/v1/engines/text-embedding-ada-002/embeddings', { input: 'x' }).then((response) => response.text())); // Fastify route
      calls.push(harness.post('/v1/images/generations', { prompt: 'a cat', model: 'dall-e' }).then((response) => response.text())); // images: no price set -> 403 or answered
      calls.push(harness.post('/v1/audio/speech', { model: 'tts-1', input: 'hello' }).then((response) => response.arrayBuffer())); // audio
      // a client that leaves mid-stream
      const controller = new AbortController();
      calls.push(
        fetch(`${harness.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ ...slow, emulator: { chunks: 50, delay_ms: 50 } }),
          signal: controller.signal,
        })
          .then(async (response) => {
            const reader = response.body!.getReader();
            await reader.read();
            controller.abort();
          })
          .catch(() => undefined),
      );
      // a client that leaves before any answer (the upstream hangs)
      const early = new AbortController();
      calls.push(
        fetch(`${harness.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ ...slow, emulator: { chunks: 50, delay_ms: 500 } }),
          signal: early.signal,
        }).catch(() => undefined),
      );
      setTimeout(() => early.abort(), 50);
    }
    // mid-flight the counts are real (so the zero below means something)
    let peak = 0;
    for (const waitUntil = Date.now() + 2_000; peak === 0 && Date.now() < waitUntil;) {
      await new Promise((wake) => setTimeout(wake, 10));
      peak = limiter().byToken.get(harness.tokenId) ?? 0;
    }
    expect(peak).toBeGreaterThan(0);
    await Promise.all(calls);
    // the server sees the aborts a moment after the clients
    const deadline = Date.now() + 5_000;
    while ((limiter().byToken.size > 0 || limiter().byUser.size > 0) && Date.now() < deadline)
      await new Promise((wake) => setTimeout(wake, 20));
    expect([...limiter().byToken.entries()]).toEqual([]);
    expect([...limiter().byUser.entries()]).toEqual([]);
    await harness.settled();
    const after = await held();
    expect({ user: after.user, token: after.token }).toEqual({ user: 0, token: 0 });
  });
});
