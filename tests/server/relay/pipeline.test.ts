// The one relay pipeline (server/relay/pipeline.ts): every route fills the
// upstream request's operation, parsed body and api-version; its hook points
// can refuse a request before anything is held or give a hold back before
// the call; a crash after the reservation gives the hold back; and the
// OpenAI client-side codec reads what the relay bills.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INBOUND_CODECS, openaiChat } from '../../../server/protocols/inbound';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { type RelayContext, type RelayOutcome } from '../../../server/relay/context';
import { relayContextOf } from '../../../server/plugins/relayContext';
import type { UpstreamRequest } from '../../../server/relay/attempt';
import { relayError } from '../../../server/relay/errors';
import { runRelay } from '../../../server/relay/pipeline';
import { textRoute } from '../../../server/relay/textRoute';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

describe('the relay pipeline', () => {
  let harness: RelayHarness;
  let ctx: RelayContext;
  let originalDispatch: RelayContext['dispatch'];
  const asked: UpstreamRequest[] = [];

  beforeAll(async () => {
    harness = await startRelayHarness();
    ctx = relayContextOf(harness.app, bookkeepingFor(harness.app.ctx, harness.app.log));
    originalDispatch = ctx.dispatch;
  });
  afterAll(() => harness?.close());
  beforeEach(async () => {
    await resetRelay(harness);
    await harness.addChannel({ name: 'emulator', key: 'sk-good', models: 'gpt-3.5-turbo,text-embedding-ada-002,dall-e,tts-1' });
    asked.length = 0;
    ctx.dispatch = (caller, request) => {
      asked.push(request);
      return originalDispatch(caller, request);
    };
  });
  afterEach(() => {
    ctx.dispatch = originalDispatch;
    ctx.hooks.beforeAdmit.length = 0;
    ctx.hooks.beforeReserve.length = 0;
    ctx.hooks.beforeDispatch.length = 0;
    ctx.hooks.afterFinish.length = 0;
  });

  const held = async () => {
    const user = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow();
    const token = await harness.app.ctx.db
      .selectFrom('tokens')
      .select('held_quota')
      .where('id', '=', harness.tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(user.held_quota), token: Number(token.held_quota) };
  };
  const chat = { model: 'gpt-3.5-turbo', max_tokens: 20, messages: [{ role: 'user', content: 'hello pipeline' }] };

  it("fills operation, the parsed body and the client's api-version on every route", async () => {
    // the fast path before Fastify
    const plain = await harness.post('/v1/chat/completions?api-version=2024-06-01', chat);
    expect(plain.status).toBe(200);
    // the Fastify routes
    const engines = await harness.post('/v1/engines/text-embedding-ada-002/embeddings', { input: 'words' });
    expect(engines.status).toBe(200);
    const image = await harness.post('/v1/images/generations?api-version=2024-02-01', {
      model: 'dall-e',
      prompt: 'a fox',
      size: '256x256',
    });
    expect(image.status).toBe(200);
    // speech has no default price: give tts-1 one for this call
    const prices = harness.app.ctx.options.get('ModelRatio');
    await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...(JSON.parse(prices) as object), 'tts-1': 7.5 }));
    try {
      const speech = await harness.post('/v1/audio/speech', { model: 'tts-1', input: 'hello', voice: 'alloy' });
      expect(speech.status).toBe(200);
      expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0);
    } finally {
      await harness.app.ctx.options.set('ModelRatio', prices);
    }
    expect(asked.map((request) => [request.operation, request.model, request.query])).toEqual([
      ['chat', 'gpt-3.5-turbo', { 'api-version': '2024-06-01' }],
      ['embeddings', 'text-embedding-ada-002', undefined],
      ['images', 'dall-e', { 'api-version': '2024-02-01' }],
      ['audio_speech', 'tts-1', undefined],
    ]);
    expect(asked[0].json).toEqual(chat);
    expect(asked[0].path).toBe('/v1/chat/completions');
    expect(asked[1].path).toBe('/v1/embeddings');
    expect(asked[2].json).toMatchObject({ prompt: 'a fox' });
    expect(asked[3].json).toMatchObject({ input: 'hello' });
    // nothing changed in the chat body: the client's own bytes went on
    expect(asked[0].body('gpt-3.5-turbo').toString()).toBe(JSON.stringify(chat));
    // every hold is settled once the queued settlements are written
    await harness.settled();
    expect(await held()).toEqual({ user: 0, token: 0 });
  });

  it('lets a beforeAdmit hook refuse before anything is held, and tells afterFinish', async () => {
    const finished: Array<[RelayOutcome, string]> = [];
    ctx.hooks.beforeAdmit.push((caller, operation) =>
      operation === 'chat' && Number(caller.token.id) === harness.tokenId
        ? { ...relayError(429, 'slow down', 'rate_limited', 'rate_limit_error'), retryAfter: 3 }
        : undefined,
    );
    ctx.hooks.afterFinish.push((outcome, operation) => void finished.push([outcome, operation]));
    const before = await harness.balances();
    const refused = await harness.post('/v1/chat/completions', chat);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(await refused.json()).toEqual({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limited' } });
    expect(asked).toHaveLength(0);
    // another operation passes the hook and is billed
    expect((await harness.post('/v1/embeddings', { model: 'text-embedding-ada-002', input: 'words' })).status).toBe(200);
    const after = await harness.balances();
    expect(after.user.request_count).toBe(before.user.request_count + 1);
    expect(finished).toEqual([
      ['refused', 'chat'],
      ['settled', 'embeddings'],
    ]);
  });

  it('gives the hold back when a beforeDispatch hook refuses, and passes the admission to the hooks', async () => {
    const reserveSeen: string[] = [];
    ctx.hooks.beforeReserve.push((admission) => void reserveSeen.push(admission.model));
    ctx.hooks.beforeDispatch.push((admission) => relayError(503, `no capacity for ${admission.model}`, 'no_capacity', 'server_error'));
    const before = await harness.balances();
    const refused = await harness.post('/v1/chat/completions', chat);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('no_capacity');
    expect(reserveSeen).toEqual(['gpt-3.5-turbo']);
    expect(asked).toHaveLength(0);
    expect(await held()).toEqual({ user: 0, token: 0 });
    const after = await harness.balances();
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    expect(after.user.quota).toBe(before.user.quota);
  });

  it('serves a route declared with another client codec (the key in x-api-key), billing it like any other', async () => {
    const codec = {
      ...openaiChat,
      authorization: (headers: Record<string, string | string[] | undefined>) => `Bearer ${String(headers['x-api-key'] ?? '')}`,
    };
    const route = textRoute(codec, 'chat', '/v1/chat/completions');
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        void runRelay(ctx, route, { headers: request.headers, ip: '127.0.0.1', body: JSON.parse(raw.toString()), raw }, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const before = await harness.balances();
      const answered = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': harness.apiKey },
        body: JSON.stringify(chat),
      });
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as { choices: unknown[] }).choices).toHaveLength(1);
      const unknown = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.apiKey}` },
        body: JSON.stringify(chat),
      });
      expect(unknown.status).toBe(401);
      const after = await harness.balances();
      expect(after.user.request_count).toBe(before.user.request_count + 1);
      expect(after.token.remain_quota).toBeLessThan(before.token.remain_quota);
      expect(asked.map((request) => request.operation)).toEqual(['chat']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives the hold back when a step fails unexpectedly after the reservation, and answers 500', async () => {
    let heldDuringCall: { user: number; token: number } | undefined;
    ctx.dispatch = async () => {
      heldDuringCall = await held();
      throw new Error('a bug in a step');
    };
    const before = await harness.balances();
    for (const [path, body] of [
      ['/v1/chat/completions', chat],
      ['/v1/images/generations', { model: 'dall-e', prompt: 'a fox' }],
    ] as const) {
      const crashed = await harness.post(path, body);
      expect(crashed.status).toBe(500);
      expect(((await crashed.json()) as { error: { message: string } }).error.message).toBe('internal error');
    }
    expect(heldDuringCall!.token).toBeGreaterThan(0);
    expect(await held()).toEqual({ user: 0, token: 0 });
    const after = await harness.balances();
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    expect(after.user.request_count).toBe(before.user.request_count);
  });
});

describe('the OpenAI client-side codec', () => {
  it('is the registered codec of the openai protocol', () => {
    expect(INBOUND_CODECS.openai).toBe(openaiChat);
    expect(openaiChat.protocol).toBe('openai');
  });

  it('reads the reported usage of a JSON answer from its bytes, without parsing it', () => {
    const bytes = Buffer.from(
      '{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}',
    );
    const answer = {
      bytes,
      get value(): unknown {
        throw new Error('parsed');
      },
    };
    expect(openaiChat.jsonUsage(answer)).toEqual({ promptTokens: 7, completionTokens: 3, cachedPromptTokens: 4 });
    const none = Buffer.from('{"choices":[{"message":{"content":"counted text"}},{"text":" more"}],"usage":null}');
    expect(openaiChat.jsonUsage({ bytes: none, value: JSON.parse(none.toString()) })).toBeUndefined();
    expect(openaiChat.answerText(JSON.parse(none.toString()))).toBe('counted text more');
  });

  it('bounds the prompt per mode at least as high as its count', () => {
    const cases = [
      ['chat', { messages: [{ role: 'user', content: 'héllo wörld, how are you' }] }],
      ['completions', { prompt: 'once upon a time' }],
      ['edits', { input: 'teh cat', instruction: 'fix the spelling' }],
      ['embeddings', { input: ['one', 'two three'] }],
      ['moderations', { input: 'some text' }],
    ] as const;
    for (const [mode, body] of cases) {
      const bound = openaiChat.promptTokens(mode, body, 'gpt-3.5-turbo', { bound: true });
      const counted = openaiChat.promptTokens(mode, body, 'gpt-3.5-turbo', {});
      expect(counted).toBeGreaterThan(0);
      expect(bound).toBeGreaterThanOrEqual(counted);
    }
    expect(openaiChat.model('moderations', {}, undefined)).toBe('text-moderation-latest');
    expect(openaiChat.model('embeddings', {}, 'text-embedding-ada-002')).toBe('text-embedding-ada-002');
    expect(openaiChat.check('edits', { input: 'x' })).toMatchObject({ code: 'required_field_missing' });
  });

  it('changes only what it must in the upstream body', () => {
    const body = { model: 'a', messages: [], stream: true, stream_options: { other: 1 } };
    expect(JSON.parse(openaiChat.encodeChanged(body, { model: 'b', askUsage: true }))).toEqual({
      ...body,
      model: 'b',
      stream_options: { other: 1, include_usage: true },
    });
    expect(JSON.parse(openaiChat.encodeChanged(body, { model: 'o3-mini', outputLimit: 50, askUsage: false }))).toEqual({
      ...body,
      model: 'o3-mini',
      max_completion_tokens: 50,
    });
    expect(JSON.parse(openaiChat.encodeChanged(body, { model: 'gpt-4', outputLimit: 50, askUsage: false }))).toEqual({
      ...body,
      model: 'gpt-4',
      max_tokens: 50,
    });
    expect(openaiChat.errorBody({ message: 'm', type: 't', code: null })).toBe(
      '{"error":{"message":"m","type":"t","param":null,"code":null}}',
    );
  });

  it('watches a stream cut anywhere and reports its usage', () => {
    const stream =
      'data: {"choices":[{"delta":{"content":"Hi"}}],"usage":null}\n\ndata: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\ndata: [DONE]\n\n';
    for (let cut = 0; cut <= stream.length; cut += 1) {
      const watcher = openaiChat.watchStream(true);
      const passed = [
        watcher.pushBytes(Buffer.from(stream.slice(0, cut))),
        watcher.pushBytes(Buffer.from(stream.slice(cut))),
        watcher.flush(),
      ]
        .map(String)
        .join('');
      expect(passed).not.toContain('"prompt_tokens":5');
      expect(watcher.reportedUsage()).toEqual({ promptTokens: 5, completionTokens: 1, cachedPromptTokens: 0 });
    }
  });
});
