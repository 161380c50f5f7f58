// Keys stay secret: a channel cannot be repointed (base URL or type) without
// giving its key again, and no upstream error text carries a key to anyone,
// whether the relay, the channel test or the balance query asked. Token
// holders read a generic upstream error with a request id; the detail, with
// that id, is in the server log.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

let harness: RelayHarness;
let leaky: Server;
let leakyUrl: string;

/** An upstream that quotes back whatever credentials it was sent, as careless proxies do. */
function startLeakyUpstream(): Promise<void> {
  leaky = createServer((request, response) => {
    const authorization = String(request.headers.authorization ?? '');
    const key = authorization.replace(/^Bearer /, '');
    const send = (status: number, error: Record<string, unknown>) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error }));
    };
    request.resume();
    request.on('end', () => {
      if (request.url!.startsWith('/leak500/')) {
        return send(500, {
          message: `proxy 10.1.2.3:8080 failed for Authorization: ${authorization} (key=${key})`,
          type: 'server_error',
          code: null,
        });
      }
      if (request.url!.startsWith('/leak401/')) {
        return send(401, {
          message: `Incorrect API key provided: ${key}. Header was ${authorization}.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        });
      }
      return send(400, {
        message: `The model does not exist for key ${key}; see https://internal.example/docs?key=${key} (served by 10.0.0.7)`,
        type: 'invalid_request_error',
        code: 'model_not_found',
      });
    });
  });
  return new Promise((resolve) => {
    leaky.listen(0, '127.0.0.1', () => {
      const address = leaky.address();
      leakyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      resolve();
    });
  });
}

beforeAll(async () => {
  harness = await startRelayHarness();
  await startLeakyUpstream();
});
afterAll(async () => {
  await harness.close();
  await new Promise((resolve) => leaky.close(resolve));
});
beforeEach(async () => {
  await resetRelay(harness);
});

const SK_KEY = 'sk-live-Sup3rSecretKey42';
/** Not shaped like an OpenAI key: only knowing the channel's own key finds it. */
const PLAIN_KEY = 'tenant-9f8e7d6c5b4aQ';
const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] };

const storedChannel = (id: number) =>
  harness.app.ctx.db.selectFrom('channels').select(['base_url', 'type', 'key']).where('id', '=', id).executeTakeFirstOrThrow();

describe('repointing a channel', () => {
  it('needs the key again when the base URL changes', async () => {
    const id = await harness.addChannel({ name: 'moving', key: SK_KEY, base_url: `${leakyUrl}/ok` });
    const refused = await harness.admin('PUT', '/api/channel/', {
      id,
      name: 'moving',
      type: 8,
      base_url: 'https://attacker.example',
      models: 'gpt-4',
      key: '',
    });
    expect(refused.success).toBe(false);
    expect(refused.message).toMatch(/base URL or the type.*key again/);
    expect(await storedChannel(id)).toEqual({ base_url: `${leakyUrl}/ok`, type: 8, key: SK_KEY });

    const rekeyed = await harness.admin('PUT', '/api/channel/', {
      id,
      name: 'moving',
      type: 8,
      base_url: 'https://new.example',
      models: 'gpt-4',
      key: 'sk-new-key-123456',
    });
    expect(rekeyed.success).toBe(true);
    expect(await storedChannel(id)).toEqual({ base_url: 'https://new.example', type: 8, key: 'sk-new-key-123456' });
  });

  it('needs the key again when the type changes, and not for other edits', async () => {
    const id = await harness.addChannel({ name: 'typed', key: SK_KEY, base_url: `${leakyUrl}/ok` });
    const refused = await harness.admin('PUT', '/api/channel/', { id, type: 1, key: '' });
    expect(refused.success).toBe(false);
    expect(Number((await storedChannel(id)).type)).toBe(8);
    // the same base URL spelled with a trailing slash, a new name and models: no key needed
    const renamed = await harness.admin('PUT', '/api/channel/', {
      id,
      name: 'renamed',
      type: 8,
      base_url: `${leakyUrl}/ok/`,
      models: 'gpt-4,gpt-3.5-turbo',
      key: '',
    });
    expect(renamed.success).toBe(true);
    expect((await storedChannel(id)).key).toBe(SK_KEY);
  });
});

describe('the admin checks scrub keys from upstream texts', () => {
  it.each([SK_KEY, PLAIN_KEY])('channel test with key %s shows the complaint, never the key', async (key) => {
    for (const prefix of ['/leak401', '/leak500', '/leak400']) {
      const id = await harness.addChannel({ name: `test${prefix}`, key, base_url: `${leakyUrl}${prefix}` });
      const result = await harness.admin('GET', `/api/channel/test/${id}`);
      expect(result.success, prefix).toBe(false);
      expect(result.message, prefix).not.toContain(key);
      expect(result.message, prefix).not.toMatch(/Bearer (?!\*\*\*)/);
      // the admin still reads what went wrong
      expect(result.message, prefix).toMatch(/Incorrect API key|failed for Authorization|does not exist/);
    }
  });

  it.each([SK_KEY, PLAIN_KEY])('balance query with key %s never shows the key', async (key) => {
    const id = await harness.addChannel({ name: 'balance', key, base_url: `${leakyUrl}/leak401` });
    const result = await harness.admin('GET', `/api/channel/update_balance/${id}`);
    expect(result.success).toBe(false);
    expect(result.message).toContain('Incorrect API key');
    expect(result.message).not.toContain(key);
  });

  it('keeps the reason an unreachable channel gives the admin (its address) in the channel test', async () => {
    const id = await harness.addChannel({ name: 'nowhere', key: SK_KEY, base_url: 'http://127.0.0.1:1' });
    const result = await harness.admin('GET', `/api/channel/test/${id}`);
    expect(result.success).toBe(false);
    expect(result.message).toContain('could not reach upstream');
  });
});

describe('what token holders read of upstream failures', () => {
  it('a network failure: a generic error with a request id, the address only in the log', async () => {
    const warn = vi.spyOn(harness.app.log, 'warn');
    try {
      await harness.addChannel({ name: 'nowhere', key: SK_KEY, base_url: 'http://127.0.0.1:1' });
      const response = await harness.post('/v1/chat/completions', chat);
      expect(response.status).toBe(502);
      const { error } = (await response.json()) as any;
      expect(error).toMatchObject({ type: 'server_error', code: 'upstream_unreachable' });
      expect(error.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|:1\b/);
      const requestId = /request id (req_\w+)/.exec(error.message)?.[1];
      expect(requestId).toBeDefined();
      const logged = warn.mock.calls.map(([fields]) => fields as any).find((fields) => fields?.requestId === requestId);
      expect(logged?.detail).toMatch(/ECONNREFUSED/);
    } finally {
      warn.mockRestore();
    }
  });

  it.each([SK_KEY, PLAIN_KEY])(
    'an upstream 5xx or auth failure: generic, with no key, address or upstream wording (key %s)',
    async (key) => {
      for (const [prefix, status] of [
        ['/leak500', 500],
        ['/leak401', 502],
      ] as const) {
        await resetRelay(harness);
        await harness.addChannel({ name: prefix, key, base_url: `${leakyUrl}${prefix}` });
        const response = await harness.post('/v1/chat/completions', chat);
        expect(response.status, prefix).toBe(status);
        const { error } = (await response.json()) as any;
        expect(error.message, prefix).toMatch(/^the upstream service (failed|refused the gateway) \(request id req_\w+\)$/);
        expect(error.code, prefix).toBe('upstream_error');
      }
    },
  );

  it('an OpenAI-shaped complaint about the request keeps its message, without key, URL or address', async () => {
    await harness.addChannel({ name: 'picky', key: SK_KEY, base_url: `${leakyUrl}/leak400` });
    const response = await harness.post('/v1/chat/completions', chat);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as any;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    expect(error.message).toContain('The model does not exist');
    expect(error.message).not.toContain(SK_KEY);
    expect(error.message).not.toContain('internal.example');
    expect(error.message).not.toContain('10.0.0.7');
  });
});
