// The relay routes beyond chat: uploads forwarded intact, image billing and
// refunds, edits and the engines path, dead keys and channel disabling,
// errors inside an HTTP 200, OpenAI's billing endpoints, 501s and 404s.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelStatus } from '../../../common/roles';
import { computeQuota, imageQuota } from '../../../server/billing/prices';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

let harness: RelayHarness;

beforeAll(async () => {
  harness = await startRelayHarness();
});
afterAll(() => harness.close());
beforeEach(async () => {
  await resetRelay(harness);
  await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
});

const IMAGE_MODELS = 'dall-e,whisper-1,text-davinci-edit-001,text-embedding-ada-002';

const channelRow = (id: number) =>
  harness.app.ctx.db.selectFrom('channels').select(['status', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow();
const consumeLogCount = async () => {
  await harness.settled();
  return Number(
    (
      await harness.app.ctx.db
        .selectFrom('logs')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('type', '=', 2)
        .executeTakeFirstOrThrow()
    ).count,
  );
};

/** A multipart body with a binary file part holding every byte value, CRLFs and boundary look-alikes included. */
function multipartUpload(model: string) {
  const boundary = '----switchboard-test-boundary-7MA4YWxkTrZu0gW';
  const audio = Buffer.concat([
    Buffer.from(Array.from({ length: 256 }, (_, index) => index)),
    Buffer.from(`\r\n--${boundary.slice(0, -3)}\r\n`),
    Buffer.alloc(4096, 0xff),
  ]);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
    audio,
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="response_format"\r\n\r\njson\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

const upload = (path: string, model: string) => {
  const { body, contentType } = multipartUpload(model);
  return fetch(`${harness.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: `Bearer ${harness.apiKey}` },
    body,
  }).then((response) => ({
    response,
    body,
    contentType,
  }));
};

describe('audio uploads', () => {
  it('reach the upstream byte for byte with their boundary, for transcriptions and translations', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: IMAGE_MODELS });
    for (const path of ['/v1/audio/transcriptions', '/v1/audio/translations']) {
      const { response, body, contentType } = await upload(path, 'whisper-1');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ text: `received ${body.length} bytes` });
      const upstream = harness.emulator.requests.at(-1)!;
      expect(upstream.path).toBe(path);
      expect(upstream.headers['content-type']).toBe(contentType);
      expect(Buffer.compare(upstream.rawBody, body)).toBe(0);
    }
  });

  it('swap only the model value when the channel maps the model', async () => {
    await harness.addChannel({ name: 'mapped', key: 'sk-good', models: IMAGE_MODELS, model_mapping: '{"whisper-1":"whisper-large"}' });
    const { response, body } = await upload('/v1/audio/transcriptions', 'whisper-1');
    expect(response.status).toBe(200);
    const expected = Buffer.from(
      body.toString('latin1').replace('name="model"\r\n\r\nwhisper-1\r\n', 'name="model"\r\n\r\nwhisper-large\r\n'),
      'latin1',
    );
    expect(Buffer.compare(harness.emulator.requests.at(-1)!.rawBody, expected)).toBe(0);
    await harness.settled();
    const log = await harness.app.ctx.db
      .selectFrom('logs')
      .select('model_name')
      .where('type', '=', 2)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(log.model_name).toBe('whisper-1');
  });

  it('refuse a body without a model field and speech without input', async () => {
    const { body, contentType } = multipartUpload('');
    const response = await fetch(`${harness.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { 'content-type': contentType, authorization: `Bearer ${harness.apiKey}` },
      body,
    });
    expect(response.status).toBe(400);
    const speech = await harness.post('/v1/audio/speech', { model: 'tts-1', voice: 'alloy' });
    expect(speech.status).toBe(400);
    expect(((await speech.json()) as any).error.code).toBe('required_field_missing');
  });
});

describe('images', () => {
  it('bill a missing n as one image, forwarding the body unchanged', async () => {
    const channelId = await harness.addChannel({ name: 'emu', key: 'sk-good', models: IMAGE_MODELS });
    const before = await harness.balances();
    const request = { prompt: 'a red fox', size: '1024x1024', response_format: 'url', user: 'someone' };
    const response = await harness.post('/v1/images/generations', request);
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data).toHaveLength(1);
    expect(harness.emulator.requests.at(-1)!.body).toEqual(request);
    const charge = imageQuota(8, '1024x1024', 1);
    expect(charge).toBe(10000);
    const after = await harness.balances();
    expect(before.user.quota - after.user.quota).toBe(charge);
    expect(before.token.remain_quota - after.token.remain_quota).toBe(charge);
    expect(after.user.request_count).toBe(before.user.request_count + 1);
    expect((await channelRow(channelId)).used_quota).toBe(charge);
  });

  it('send the mapped model upstream, every other field unchanged, priced as the requested model', async () => {
    await harness.addChannel({ name: 'mapped', key: 'sk-good', models: IMAGE_MODELS, model_mapping: '{"dall-e":"dall-e-2"}' });
    const before = await harness.balances();
    const request = { model: 'dall-e', prompt: 'a red fox', n: 3, size: '256x256', response_format: 'b64_json' };
    expect((await harness.post('/v1/images/generations', request)).status).toBe(200);
    expect(harness.emulator.requests.at(-1)!.body).toEqual({ ...request, model: 'dall-e-2' });
    expect(before.user.quota - (await harness.balances()).user.quota).toBe(imageQuota(8, '256x256', 3));
  });

  it('refund everything when the provider fails or cannot be reached', async () => {
    for (const key of ['sk-down', 'sk-drop']) {
      await resetRelay(harness);
      const channelId = await harness.addChannel({ name: key, key, models: IMAGE_MODELS });
      const before = await harness.balances();
      const logs = await consumeLogCount();
      const response = await harness.post('/v1/images/generations', { prompt: 'a red fox', n: 2 });
      expect(response.status).toBe(key === 'sk-down' ? 500 : 502);
      expect(((await response.json()) as any).error.type).toBe('server_error');
      expect(await harness.balances()).toEqual(before);
      expect((await channelRow(channelId)).used_quota).toBe(0);
      expect(await consumeLogCount()).toBe(logs);
    }
  });

  it('validate prompt, size and n, and check the token quota before the call', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: IMAGE_MODELS });
    const requests = harness.emulator.requests.length;
    expect((await harness.post('/v1/images/generations', { n: 1 })).status).toBe(400);
    expect((await harness.post('/v1/images/generations', { prompt: 'x', size: '640x480' })).status).toBe(400);
    expect((await harness.post('/v1/images/generations', { prompt: 'x', n: 11 })).status).toBe(400);
    const small = await harness.admin('POST', '/api/token/', { name: 'small', remain_quota: imageQuota(8, '256x256', 1) });
    const refused = await harness.post('/v1/images/generations', { prompt: 'x', n: 2 }, `sk-${small.data.key}`);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe('insufficient_quota');
    expect(harness.emulator.requests.length).toBe(requests);
  });
});

describe('edits and the engines path', () => {
  it('require an instruction, then bill the upstream usage', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: IMAGE_MODELS });
    const missing = await harness.post('/v1/edits', { model: 'text-davinci-edit-001', input: 'fix me' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error.code).toBe('required_field_missing');
    const before = await harness.balances();
    const response = await harness.post('/v1/edits', {
      model: 'text-davinci-edit-001',
      input: 'fix this speling',
      instruction: 'fix the spelling',
    });
    expect(response.status).toBe(200);
    expect(before.user.quota - (await harness.balances()).user.quota).toBe(
      computeQuota({ promptTokens: 3, completionTokens: 2, ratio: 10, completionRatio: 1 }),
    );
  });

  it('take the embeddings model from /v1/engines/:model/embeddings when the body has none', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: IMAGE_MODELS });
    const response = await harness.post('/v1/engines/text-embedding-ada-002/embeddings', { input: 'alpha beta' });
    expect(response.status).toBe(200);
    const upstream = harness.emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/embeddings');
    expect(upstream.body).toEqual({ input: 'alpha beta', model: 'text-embedding-ada-002' });
  });
});

describe('dead keys and upstream errors', () => {
  const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] };

  it("answer an upstream 401 as the gateway's failure (502), and disable the channel only when AutomaticDisableChannelEnabled is on", async () => {
    const kept = await harness.addChannel({ name: 'dead', key: 'sk-dead' });
    const before = await harness.balances();
    const response = await harness.post('/v1/chat/completions', chat);
    // the channel's key was refused, not the caller's: no 401 that would blame the caller's key
    expect(response.status).toBe(502);
    const error = ((await response.json()) as any).error;
    expect(error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(error.message).not.toContain('sk-dead');
    expect((await channelRow(kept)).status).toBe(ChannelStatus.enabled);
    expect(await harness.balances()).toEqual(before);

    await resetRelay(harness);
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    const doomed = await harness.addChannel({ name: 'dead too', key: 'sk-dead' });
    const again = await harness.post('/v1/chat/completions', chat);
    expect(again.status).toBe(502);
    expect(((await again.json()) as any).error.code).toBe('upstream_error');
    expect((await channelRow(doomed)).status).toBe(ChannelStatus.disabled);
    const abilities = await harness.app.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', doomed).execute();
    expect(abilities.every((ability) => Number(ability.enabled) === 0)).toBe(true);
    // the disabled channel no longer routes
    expect((await harness.post('/v1/chat/completions', chat)).status).toBe(503);
  });

  it('move a request off a dead key to another channel when retries are allowed, charging once', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    await harness.app.ctx.options.set('RetryTimes', '2');
    const dead = await harness.addChannel({ name: 'dead', key: 'sk-dead', priority: 10 });
    const good = await harness.addChannel({ name: 'good', key: 'sk-good', priority: 0 });
    const before = await harness.balances();
    const response = await harness.post('/v1/chat/completions', chat);
    expect(response.status).toBe(200);
    expect(before.user.quota - (await harness.balances()).user.quota).toBe(
      computeQuota({ promptTokens: 1, completionTokens: 5, ratio: 15, completionRatio: 2 }),
    );
    expect((await channelRow(dead)).status).toBe(ChannelStatus.disabled);
    expect((await channelRow(good)).status).toBe(ChannelStatus.enabled);
  });

  it('never retry a client error on another channel', async () => {
    await harness.app.ctx.options.set('RetryTimes', '3');
    // a base URL with an unknown prefix makes the emulator answer 404: an error of the request, not of a key
    await harness.addChannel({ name: 'one', key: 'sk-good', priority: 1, base_url: `${harness.emulator.baseUrl}/nope` });
    await harness.addChannel({ name: 'two', key: 'sk-good', base_url: `${harness.emulator.baseUrl}/nope` });
    const requests = harness.emulator.requests.length;
    const response = await harness.post('/v1/chat/completions', chat);
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.type).toBe('invalid_request_error');
    expect(harness.emulator.requests.length).toBe(requests + 1);
  });

  it('treat an error inside an HTTP 200 as the failure it is', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    const channelId = await harness.addChannel({ name: 'sneaky', key: 'sk-dead-in-200' });
    const before = await harness.balances();
    const response = await harness.post('/v1/chat/completions', chat);
    expect(response.status).toBe(502);
    expect(((await response.json()) as any).error.code).toBe('upstream_error');
    expect((await channelRow(channelId)).status).toBe(ChannelStatus.disabled);
    expect(await harness.balances()).toEqual(before);
  });
});

describe('unlimited tokens', () => {
  it("charge and refund only the owner's quota, still counting the token's usage", async () => {
    const unlimited = await harness.admin('POST', '/api/token/', { name: 'open', unlimited_quota: true });
    const key = `sk-${unlimited.data.key}`;
    await harness.addChannel({ name: 'emu', key: 'sk-good' });
    const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] };
    const before = await harness.balances(unlimited.data.id);
    expect((await harness.post('/v1/chat/completions', chat, key)).status).toBe(200);
    const charge = computeQuota({ promptTokens: 1, completionTokens: 5, ratio: 15, completionRatio: 2 });
    const after = await harness.balances(unlimited.data.id);
    expect(before.user.quota - after.user.quota).toBe(charge);
    expect(after.token).toEqual({ remain_quota: before.token.remain_quota, used_quota: before.token.used_quota + charge });

    await resetRelay(harness);
    await harness.addChannel({ name: 'down', key: 'sk-down' });
    expect((await harness.post('/v1/chat/completions', chat, key)).status).toBe(500);
    expect(await harness.balances(unlimited.data.id)).toEqual(after);
  });
});

describe('dashboard billing endpoints', () => {
  const get = (path: string, key = harness.apiKey) => fetch(`${harness.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });

  it("report a limited token's figures in dollars, under both prefixes", async () => {
    const token = await harness.admin('POST', '/api/token/', { name: 'dash', remain_quota: 750_000, expired_time: 4_102_444_800 });
    await harness.app.ctx.db.updateTable('tokens').set({ used_quota: 250_000 }).where('id', '=', token.data.id).execute();
    for (const prefix of ['', '/v1']) {
      const subscription = (await (await get(`${prefix}/dashboard/billing/subscription`, `sk-${token.data.key}`)).json()) as any;
      expect(subscription).toEqual({
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: 2,
        hard_limit_usd: 2,
        system_hard_limit_usd: 2,
        access_until: 4_102_444_800,
      });
      const usage = (await (
        await get(`${prefix}/dashboard/billing/usage?start_date=2024-01-01&end_date=2024-02-01`, `sk-${token.data.key}`)
      ).json()) as any;
      expect(usage).toEqual({ object: 'list', total_usage: 50 });
    }
  });

  it("report the owner's figures for an unlimited token, in quota when currency display is off", async () => {
    const token = await harness.admin('POST', '/api/token/', { name: 'unlimited', unlimited_quota: true });
    const user = await harness.app.ctx.db
      .selectFrom('users')
      .select(['quota', 'used_quota'])
      .where('username', '=', 'root')
      .executeTakeFirstOrThrow();
    await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
    try {
      const subscription = (await (await get('/v1/dashboard/billing/subscription', `sk-${token.data.key}`)).json()) as any;
      expect(subscription.hard_limit_usd).toBe(user.quota + user.used_quota);
      expect(subscription.access_until).toBe(0);
      expect(((await (await get('/dashboard/billing/usage', `sk-${token.data.key}`)).json()) as any).total_usage).toBe(
        user.used_quota * 100,
      );
    } finally {
      await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'true');
    }
  });

  it('refuse a bad key with an OpenAI error', async () => {
    const response = await get('/dashboard/billing/subscription', 'sk-nope');
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error.code).toBe('invalid_api_key');
  });
});

describe('routes the gateway does not relay', () => {
  const call = (method: string, path: string, init: RequestInit = {}, key = harness.apiKey) =>
    fetch(`${harness.baseUrl}${path}`, {
      method,
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    });

  it('answer 501 api_not_implemented for fine-tunes, whatever the method or body', async () => {
    const { body, contentType } = multipartUpload('whisper-1');
    const calls = [
      call('POST', '/v1/fine-tunes', { body: '{"training_file":"file-abc"}', headers: { 'content-type': 'application/json' } }),
      call('GET', '/v1/fine-tunes/ft-abc/events'),
      call('POST', '/v1/fine-tunes/ft-abc/cancel'),
      call('POST', '/v1/fine-tunes', { body, headers: { 'content-type': contentType } }),
      call('DELETE', '/v1/models/gpt-4'),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(501);
      expect(await response.json()).toEqual({
        error: { message: 'API not implemented', type: 'invalid_request_error', param: null, code: 'api_not_implemented' },
      });
    }
    expect((await call('GET', '/v1/fine-tunes', {}, 'sk-nope')).status).toBe(401);
  });

  it('answer an OpenAI-style 404 for unknown paths and wrong methods', async () => {
    for (const [method, path] of [
      ['GET', '/v1/chat/completions'],
      ['POST', '/v1/nothing-here'],
      ['PUT', '/v1/embeddings'],
    ]) {
      const response = await call(method, path);
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).error).toMatchObject({
        message: `Invalid URL (${method} ${path})`,
        type: 'invalid_request_error',
      });
    }
  });
});
