// The credential cache for adaptors that exchange their key first (Baidu's
// access token): one exchange at a time per key, reused until shortly before
// it expires and never after, a refusal returned as the channel's failure.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { upstreamFailure } from '../../../server/protocols/shared';
import type { ChannelConfig, UpstreamAdaptor } from '../../../server/protocols/types';
import { openAiAdaptor } from '../../../server/protocols/upstream/openai';
import { credentialFor, forgetCredential, forgetCredentials } from '../../../server/relay/credentials';

let server: Server;
let baseUrl: string;
let exchanges = 0;
/** Seconds the next token lives. */
let life = 3600;

beforeAll(async () => {
  server = createServer((request, response) => {
    exchanges += 1;
    const key = new URL(request.url ?? '/', 'http://x').searchParams.get('client_id');
    // answer a little later, so concurrent calls overlap
    setTimeout(() => {
      response.setHeader('content-type', 'application/json');
      if (key === 'refused') {
        response.end(JSON.stringify({ error: 'invalid_client', error_description: 'unknown client id' }));
      } else {
        response.end(JSON.stringify({ access_token: `token-${exchanges}`, expires_in: life }));
      }
    }, 30);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((closed) => server.close(closed)));
beforeEach(() => {
  forgetCredentials();
  exchanges = 0;
  life = 3600;
  vi.useRealTimers();
});

/** An adaptor with Baidu's kind of exchange: POST /oauth/2.0/token?client_id=<key>. */
const exchanging: UpstreamAdaptor = {
  ...openAiAdaptor,
  protocol: 'baidu',
  credential: {
    cacheKey: (channel) => channel.key,
    request: (channel) => ({
      url: `${baseUrl}/oauth/2.0/token?grant_type=client_credentials&client_id=${channel.key}`,
      method: 'POST',
      headers: { accept: 'application/json' },
    }),
    parse: (status, body) => {
      const parsed = JSON.parse(body) as { access_token?: string; expires_in?: number; error?: string; error_description?: string };
      if (parsed.error) return upstreamFailure(401, `${parsed.error}: ${parsed.error_description}`, { deadKey: true });
      return { credential: parsed.access_token!, expiresInSeconds: parsed.expires_in! };
    },
  },
};
const channel = (key: string): ChannelConfig => ({ type: 15, key, baseUrl: '', other: '' });

describe('credentials for adaptors that exchange their key', () => {
  it('exchanges once for concurrent calls, then reuses the credential', async () => {
    const all = await Promise.all(Array.from({ length: 5 }, () => Promise.resolve(credentialFor(exchanging, channel('good')))));
    expect(all).toEqual(Array(5).fill('token-1'));
    expect(exchanges).toBe(1);
    expect(credentialFor(exchanging, channel('good'))).toBe('token-1');
    expect(await credentialFor(exchanging, channel('other'))).toBe('token-2');
    expect(exchanges).toBe(2);
  });

  it('renews before expiry and never hands out an expired credential', async () => {
    life = 2; // renewed at half its life when that is sooner than five minutes before expiry
    expect(await credentialFor(exchanging, channel('short'))).toBe('token-1');
    expect(credentialFor(exchanging, channel('short'))).toBe('token-1');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const renewed = credentialFor(exchanging, channel('short'));
    expect(renewed).toBeInstanceOf(Promise);
    expect(await renewed).toBe('token-2');
  });

  it("returns a refused exchange as the channel's failure, and does not cache it", async () => {
    const failure = await credentialFor(exchanging, channel('refused'));
    expect(failure).toMatchObject({ status: 401, deadKey: true, message: 'invalid_client: unknown client id' });
    await credentialFor(exchanging, channel('refused'));
    expect(exchanges).toBe(2);
  });

  it('forgets a refused credential so the next call exchanges anew, but not one exchanged in its place since', async () => {
    expect(await credentialFor(exchanging, channel('revoked'))).toBe('token-1');
    forgetCredential(exchanging, channel('revoked'), 'token-1');
    const renewed = credentialFor(exchanging, channel('revoked'));
    expect(renewed).toBeInstanceOf(Promise);
    expect(await renewed).toBe('token-2');
    // a late refusal of the old one leaves the new one cached
    forgetCredential(exchanging, channel('revoked'), 'token-1');
    expect(credentialFor(exchanging, channel('revoked'))).toBe('token-2');
    expect(exchanges).toBe(2);
  });

  it('an adaptor without an exchange needs no credential', () => {
    expect(credentialFor(openAiAdaptor, channel('any'))).toBeUndefined();
  });
});
