// The relay end to end: a real listening gateway, the OpenAI emulator as the
// upstream, and exact billing checked in the database.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { computeQuota, reservationQuota } from '../../server/billing/prices';
import { countChatPromptTokens, countTextTokens } from '../../server/protocols/inbound/tokenCount';
import { promptBound } from '../../server/protocols/inbound/promptBound';
import type { OpenAIEmulator } from '../support/openaiEmulator';
import { startSmtp } from '../support/smtp';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

let harness: RelayHarness;
let app: FastifyInstance;
let emulator: OpenAIEmulator;
let baseUrl: string;
let apiKey: string;

const admin: RelayHarness['admin'] = (...args) => harness.admin(...args);
const addChannel: RelayHarness['addChannel'] = (fields) => harness.addChannel(fields);
const post: RelayHarness['post'] = (...args) => harness.post(...args);
/** The relay settles and logs after answering; wait for that before reading the database. */
const settled = () => harness.settled();
const balances = () => harness.balances();

beforeAll(async () => {
  harness = await startRelayHarness();
  ({ app, emulator, baseUrl, apiKey } = harness);
});
afterAll(() => harness.close());
beforeEach(() => resetRelay(harness));

describe('relay', () => {
  it('relays a chat completion and bills user, token, channel and log exactly', async () => {
    const channelId = await addChannel({ name: 'emu', key: 'sk-good' });
    const before = await balances();
    const response = await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hello there friend' }] });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.choices[0].message.content).toBe('word0 word1 word2 word3 word4');
    const charge = computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 });
    expect(charge).toBe((3 + 10) * 15);
    const after = await balances();
    expect(after.user.quota).toBe(before.user.quota - charge);
    expect(after.user.used_quota).toBe(before.user.used_quota + charge);
    expect(after.user.request_count).toBe(before.user.request_count + 1);
    expect(after.token.remain_quota).toBe(before.token.remain_quota - charge);
    expect(after.token.used_quota).toBe(before.token.used_quota + charge);
    await settled();
    const channel = await app.ctx.db.selectFrom('channels').select('used_quota').where('id', '=', channelId).executeTakeFirstOrThrow();
    expect(channel.used_quota).toBe(charge);
    await settled();
    const log = await app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(log).toMatchObject({
      model_name: 'gpt-4',
      token_name: 'relay',
      quota: charge,
      prompt_tokens: 3,
      completion_tokens: 5,
      channel_id: channelId,
      is_stream: 0,
      estimated: 0,
    });
  });

  it('streams chunks with [DONE], strips the usage it asked for, and bills the reported usage', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const before = await balances();
    const response = await post('/v1/chat/completions', {
      model: 'gpt-3.5-turbo',
      stream: true,
      emulator: { chunks: 4 },
      messages: [{ role: 'user', content: 'one two' }],
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"usage"');
    expect(emulator.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    // gpt-3.5-turbo at the catalog's price ($0.50 / $1.50 per 1M)
    const charge = computeQuota({ promptTokens: 2, completionTokens: 4, ratio: 0.25, completionRatio: 3 });
    const after = await balances();
    expect(before.user.quota - after.user.quota).toBe(charge);
    await settled();
    const log = await app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(log).toMatchObject({ quota: charge, is_stream: 1, estimated: 0, completion_tokens: 4 });
  });

  it('keeps the usage event when the client asked for it', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const text = await (
      await post('/v1/chat/completions', {
        model: 'gpt-4',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'x' }],
      })
    ).text();
    expect(text).toContain('"usage"');
  });

  it('changes only the model when mapping, keeping every other field', async () => {
    await addChannel({ name: 'mapped', key: 'sk-good', model_mapping: '{"gpt-4":"gpt-4-0613"}' });
    const request = {
      model: 'gpt-4',
      temperature: 0,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'f' } }],
      custom_field: { nested: [1, 2] },
    };
    expect((await post('/v1/chat/completions', request)).status).toBe(200);
    expect(emulator.requests.at(-1)!.body).toEqual({ ...request, model: 'gpt-4-0613' });
  });

  it('forwards the client bytes untouched when nothing in them changes, and rewrites them only when something does', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const send = (text: string) =>
      fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: text,
      });
    // odd spacing, key order, a duplicate-free unknown field and an escaped string: all kept byte for byte
    const exact =
      '{ "messages":[{"role":"user","content":"caf\\u00e9 \\"quoted\\""}],\n "model":"gpt-4", "x_custom": {"keep": [1, 2.5, -0.25e-3]} }';
    expect((await send(exact)).status).toBe(200);
    expect(emulator.requests.at(-1)!.rawBody.toString('utf8')).toBe(exact);

    // a number written longer than JSON prints it (2.50, a 400-digit literal) is counted as printed, so it is sent as printed
    for (const number of ['2.50', '9'.repeat(400)]) {
      const longer = `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}],"x_custom":{"keep":[1, ${number}]}}`;
      expect((await send(longer)).status).toBe(200);
      expect(emulator.requests.at(-1)!.rawBody.toString('utf8')).toBe(JSON.stringify(JSON.parse(longer)));
    }

    // a model with spaces is routed trimmed, so the body is written anew with the trimmed name
    const padded = '{"model":" gpt-4 ","messages":[{"role":"user","content":"hi"}],"x_custom":1}';
    expect((await send(padded)).status).toBe(200);
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }], x_custom: 1 });

    // a stream that did not ask for usage gets stream_options added upstream
    const streamed = await send('{"model":"gpt-4","stream":true,"messages":[{"role":"user","content":"hi"}]}');
    await streamed.text();
    expect(emulator.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    // one that asked already goes as sent
    const asked = '{"model":"gpt-4","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}';
    await (await send(asked)).text();
    expect(emulator.requests.at(-1)!.rawBody.toString('utf8')).toBe(asked);
  });

  it('releases the reservation when the upstream fails', async () => {
    await addChannel({ name: 'down', key: 'sk-down' });
    const before = await balances();
    const response = await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(500);
    expect(((await response.json()) as any).error.type).toBe('server_error');
    expect(await balances()).toEqual(before);
  });

  it('treats an answer that breaks off mid-body as a channel failure: refunded, or retried elsewhere and charged once', async () => {
    const cut = await addChannel({ name: 'cut', key: 'sk-cut', priority: 10 });
    const before = await balances();
    const failed = await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] });
    expect(failed.status).toBe(502);
    const error = ((await failed.json()) as any).error;
    expect(error.code).toBe('upstream_unreachable');
    expect(error.message).toContain('broke off');
    expect(await balances()).toEqual(before);

    const good = await addChannel({ name: 'good', key: 'sk-good', priority: 0 });
    await app.ctx.options.set('RetryTimes', '1');
    const retried = await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hello there friend' }] });
    expect(retried.status).toBe(200);
    const charge = computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 });
    expect((await balances()).user.quota).toBe(before.user.quota - charge);
    await settled();
    const channels = await app.ctx.db
      .selectFrom('channels')
      .select(['id', 'used_quota'])
      .where('id', 'in', [cut, good])
      .orderBy('id')
      .execute();
    expect(channels).toEqual([
      { id: cut, used_quota: 0 },
      { id: good, used_quota: charge },
    ]);
  });

  it('retries on another channel and charges once', async () => {
    await addChannel({ name: 'broken', key: 'sk-down', priority: 10 });
    const good = await addChannel({ name: 'good', key: 'sk-good', priority: 0 });
    await app.ctx.options.set('RetryTimes', '1');
    const before = await balances();
    const response = await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hello' }] });
    expect(response.status).toBe(200);
    const after = await balances();
    expect(before.user.quota - after.user.quota).toBe(
      computeQuota({ promptTokens: 1, completionTokens: 5, ratio: 15, completionRatio: 2 }),
    );
    expect(after.user.request_count).toBe(before.user.request_count + 1);
    await settled();
    const log = await app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(log.channel_id).toBe(good);
  });

  it('never drives a token below zero under 50 concurrent requests', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    // Each answer uses all of max_tokens, so each success costs exactly `charge`.
    // The token holds 9 charges plus one reservation: served one after another,
    // 10 fit; all at once, floor(limit / reservation) fit. An 11th would need 10
    // charges plus its reservation, more than the token holds, in any order.
    const messages = [{ role: 'user', content: 'hi' }];
    const body = { model: 'gpt-4', max_tokens: 100, stream: true, emulator: { chunks: 100, delay_ms: 1 }, messages };
    // the whole body is the prompt's bound (a client may put its prompt in any field the vendor reads)
    const reservation = reservationQuota({
      promptTokens: promptBound(body, 'gpt-4'),
      maxTokens: 100,
      maxOutputTokens: 8192,
      ratio: 15,
      completionRatio: 2,
    });
    const charge = computeQuota({ promptTokens: 1, completionTokens: 100, ratio: 15, completionRatio: 2 });
    expect(reservation).toBeGreaterThanOrEqual(charge);
    const limit = 9 * charge + reservation;
    const limited = await admin('POST', '/api/token/', { name: 'small', remain_quota: limit });
    const key = `sk-${limited.data.key}`;
    const request = body;
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        post('/v1/chat/completions', request, key).then(async (response) => (await response.text(), response.status)),
      ),
    );
    const served = statuses.filter((status) => status === 200).length;
    expect(served).toBeGreaterThanOrEqual(Math.floor(limit / reservation));
    expect(served).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(50 - served);
    await settled();
    const token = await app.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', limited.data.id)
      .executeTakeFirstOrThrow();
    expect(token).toEqual({ remain_quota: limit - served * charge, used_quota: served * charge });
    expect(token.remain_quota).toBeGreaterThanOrEqual(0);
  });

  it("reserves on the prompt's byte bound, and on the bound by its own tokenizer when only that fits", async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    // Chinese text: three UTF-8 bytes a character, far fewer tokens
    const messages = [{ role: 'user', content: '你好世界，今天天气很好。'.repeat(20) }];
    const body = { model: 'gpt-4', max_tokens: 10, messages };
    const tokenized = promptBound(body, 'gpt-4', (text) => countTextTokens(text, 'gpt-4'));
    expect(tokenized).toBeGreaterThanOrEqual(countChatPromptTokens(messages, 'gpt-4'));
    const exact = reservationQuota({ promptTokens: tokenized, maxTokens: 10, maxOutputTokens: 8192, ratio: 15, completionRatio: 2 });
    const bound = reservationQuota({
      promptTokens: promptBound(body, 'gpt-4'),
      maxTokens: 10,
      maxOutputTokens: 8192,
      ratio: 15,
      completionRatio: 2,
    });
    expect(bound).toBeGreaterThan(exact);
    const tight = await admin('POST', '/api/token/', { name: 'tight', remain_quota: exact });
    const response = await post('/v1/chat/completions', { model: 'gpt-4', max_tokens: 10, messages }, `sk-${tight.data.key}`);
    expect(response.status).toBe(200);
    const short = await admin('POST', '/api/token/', { name: 'short', remain_quota: exact - 1 });
    expect((await post('/v1/chat/completions', { model: 'gpt-4', max_tokens: 10, messages }, `sk-${short.data.key}`)).status).toBe(429);
  });

  it('stops the upstream when the client disconnects and bills what was streamed, marked estimated', async () => {
    await addChannel({ name: 'slow', key: 'sk-good' });
    const abortedBefore = emulator.abortedRequests;
    const controller = new AbortController();
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        model: 'gpt-4',
        stream: true,
        emulator: { chunks: 40, delay_ms: 50 },
        messages: [{ role: 'user', content: 'tell me a long story' }],
      }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('word2')) received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const deadline = Date.now() + 5000;
    let log: { completion_tokens: number; prompt_tokens: number; quota: number } | undefined;
    while (Date.now() < deadline) {
      log = await app.ctx.db
        .selectFrom('logs')
        .selectAll()
        .where('type', '=', 2)
        .where('estimated', '=', 1)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      if (log && emulator.abortedRequests > abortedBefore) break;
      await new Promise((wake) => setTimeout(wake, 50));
    }
    expect(emulator.abortedRequests).toBeGreaterThan(abortedBefore);
    expect(log).toBeDefined();
    expect(log!.completion_tokens).toBeGreaterThan(0);
    expect(log!.completion_tokens).toBeLessThan(40);
    expect(log!.quota).toBe(
      computeQuota({ promptTokens: log!.prompt_tokens, completionTokens: log!.completion_tokens, ratio: 15, completionRatio: 2 }),
    );
  });

  it('answers OpenAI-style errors: bad key 401, missing model 400, no channel 503, unpriced model 403, unknown route 404', async () => {
    expect((await post('/v1/chat/completions', { model: 'gpt-4', messages: [] }, 'sk-nope')).status).toBe(401);
    expect((await post('/v1/chat/completions', { messages: [] })).status).toBe(400);
    expect((await post('/v1/chat/completions', { model: 'gpt-4', messages: [] })).status).toBe(503);
    const unpriced = await post('/v1/chat/completions', { model: 'mystery-1', messages: [] });
    expect(unpriced.status).toBe(403);
    expect(((await unpriced.json()) as any).error.code).toBe('model_price_unset');
    const bad = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: '{"model":',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toBeDefined();
    expect((await post('/v1/nothing-here', {})).status).toBe(404);
  });

  it('takes the hot routes with a trailing slash and a query string, and answers bad bodies like the rest of the API', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const body = { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] };
    expect((await post('/v1/chat/completions/?trace=1', body)).status).toBe(200);
    const send = (contentType: string, payload: string) =>
      fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': contentType, authorization: `Bearer ${apiKey}` },
        body: payload,
      });
    const empty = await send('application/json', '');
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as any).error.type).toBe('invalid_request_error');
    // not JSON: left to the Fastify route, which refuses a body that is not a JSON object
    const text = await send('text/plain', 'hello');
    expect(text.status).toBe(400);
    expect(((await text.json()) as any).error.message).toBe('the request body must be a JSON object');
  });

  it("enforces a token's model and IP allowlists", async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const onlyTurbo = await admin('POST', '/api/token/', { name: 'turbo-only', models: 'gpt-3.5-turbo' });
    const refused = await post(
      '/v1/chat/completions',
      { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] },
      `sk-${onlyTurbo.data.key}`,
    );
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.code).toBe('model_not_allowed');
    expect(
      (
        await post(
          '/v1/chat/completions',
          { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] },
          `sk-${onlyTurbo.data.key}`,
        )
      ).status,
    ).toBe(200);
    const elsewhere = await admin('POST', '/api/token/', { name: 'office-only', allowed_ips: '10.0.0.0/8' });
    const fromHere = await post(
      '/v1/chat/completions',
      { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] },
      `sk-${elsewhere.data.key}`,
    );
    expect(fromHere.status).toBe(403);
    expect(((await fromHere.json()) as any).error.code).toBe('ip_not_allowed');
    const local = await admin('POST', '/api/token/', { name: 'loopback', allowed_ips: '127.0.0.1' });
    expect(
      (await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] }, `sk-${local.data.key}`)).status,
    ).toBe(200);
  });

  it('lists only the models the caller can reach', async () => {
    await addChannel({ name: 'emu', key: 'sk-good', models: 'gpt-4', group: 'default' });
    await addChannel({ name: 'vip-only', key: 'sk-good', models: 'gpt-3.5-turbo', group: 'vip' });
    const models = (await (await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as any;
    expect(models.data.map((model: { id: string }) => model.id)).toEqual(['gpt-4']);
    expect((await fetch(`${baseUrl}/v1/models/gpt-3.5-turbo`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(404);
  });

  it('says which provider serves each listed model: the first channel by priority, from the channel-type table', async () => {
    await addChannel({ name: 'openai', type: 1, key: 'sk-good', models: 'gpt-4' });
    await addChannel({ name: 'claude', type: 14, key: 'sk-good', models: 'claude-2' });
    await addChannel({ name: 'custom', key: 'sk-good', models: 'llama-3' });
    // gpt-4 also behind a lower-priority Azure channel: the OpenAI one answers first
    await addChannel({ name: 'azure', type: 3, key: 'sk-good', models: 'gpt-4', priority: -1 });
    const models = (await (await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as any;
    expect(models.object).toBe('list');
    expect(models.data).toEqual([
      { id: 'claude-2', object: 'model', created: 1677649963, owned_by: 'anthropic' },
      { id: 'gpt-4', object: 'model', created: 1677649963, owned_by: 'openai' },
      { id: 'llama-3', object: 'model', created: 1677649963, owned_by: 'custom' },
    ]);
    const claude = (await (await fetch(`${baseUrl}/v1/models/claude-2`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as any;
    expect(claude).toEqual({ id: 'claude-2', object: 'model', created: 1677649963, owned_by: 'anthropic' });
  });

  it('relays embeddings and bills their usage', async () => {
    await addChannel({ name: 'emu', key: 'sk-good' });
    const before = await balances();
    const response = await post('/v1/embeddings', { model: 'text-embedding-ada-002', input: ['alpha beta', 'gamma'] });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data).toHaveLength(2);
    const after = await balances();
    expect(before.user.quota - after.user.quota).toBe(
      computeQuota({ promptTokens: 3, completionTokens: 0, ratio: 0.05, completionRatio: 1 }),
    );
  });

  it('e-mails the user once when a charge takes the quota below QuotaRemindThreshold', async () => {
    const smtp = await startSmtp();
    try {
      await addChannel({ name: 'emu', key: 'sk-good' });
      await app.ctx.options.set('SMTPServer', '127.0.0.1');
      await app.ctx.options.set('SMTPPort', String(smtp.port));
      await app.ctx.options.set('SMTPFrom', 'gateway@switchboard.test');
      await app.ctx.db.updateTable('users').set({ email: 'root@example.com' }).where('username', '=', 'root').execute();
      const charge = computeQuota({ promptTokens: 1, completionTokens: 5, ratio: 15, completionRatio: 2 });
      const { user } = await balances();
      // the next charge crosses the threshold; the one after stays below it
      await app.ctx.options.set('QuotaRemindThreshold', String(user.quota - Math.floor(charge / 2)));
      expect((await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
      const mail = await smtp.waitForMail('root@example.com');
      expect(mail.raw).toContain('running low');
      expect((await post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
      await new Promise((wake) => setTimeout(wake, 300));
      expect(smtp.mails).toHaveLength(1);
    } finally {
      await app.ctx.options.set('SMTPServer', '');
      await smtp.close();
    }
  });
});
