// Credentials an adaptor exchanges its channel's key for before a call
// (Baidu's access token). One exchange at a time per cache key (concurrent
// calls wait for the same one), the credential reused until shortly before it
// expires and never after (v0.5.3 served expired tokens), and a
// failed exchange is that channel's failure, classified by the adaptor.
import { request as undiciRequest } from 'undici';
import { upstreamFailure } from '../protocols/shared';
import { isUpstreamFailure, type ChannelConfig, type UpstreamAdaptor, type UpstreamFailure } from '../protocols/types';
import { upstreamSettings } from './upstream';

interface Cached {
  credential: string;
  /** Date.now() after which it is fetched anew. */
  renewAt: number;
}

const cached = new Map<string, Cached>();
const exchanging = new Map<string, Promise<string | UpstreamFailure>>();
const MAX_CACHED = 1000;
/** Renewed this long before it expires (or at half its life, if that is sooner), so no call carries a token about to lapse. */
const RENEW_MARGIN_MS = 5 * 60_000;

const cacheKeyOf = (adaptor: UpstreamAdaptor, channel: ChannelConfig) => `${adaptor.protocol}\0${adaptor.credential!.cacheKey(channel)}`;

/**
 * The credential for a call on this channel: cached (a string, at once), or
 * exchanged now (a Promise). The caller tells the two apart: a cached one the
 * vendor refuses may have been revoked before its time (forgetCredential).
 */
export function credentialFor(
  adaptor: UpstreamAdaptor,
  channel: ChannelConfig,
): string | UpstreamFailure | Promise<string | UpstreamFailure> | undefined {
  const exchange = adaptor.credential;
  if (!exchange) return undefined;
  const key = cacheKeyOf(adaptor, channel);
  const hit = cached.get(key);
  if (hit && Date.now() < hit.renewAt) return hit.credential;
  let running = exchanging.get(key);
  if (!running) {
    running = exchangeNow(adaptor, channel, key).finally(() => exchanging.delete(key));
    exchanging.set(key, running);
  }
  return running;
}

async function exchangeNow(adaptor: UpstreamAdaptor, channel: ChannelConfig, key: string): Promise<string | UpstreamFailure> {
  const exchange = adaptor.credential!;
  const target = await exchange.request(channel);
  if (isUpstreamFailure(target)) return target;
  const settings = upstreamSettings();
  let status: number;
  let body: string;
  try {
    const response = await undiciRequest(target.url, {
      method: target.method,
      headers: target.headers,
      body: target.body,
      signal: AbortSignal.timeout(settings.connectTimeoutMs + settings.idleTimeoutMs),
    });
    status = response.statusCode;
    body = await response.body.text();
  } catch (error) {
    return upstreamFailure(502, `the credential exchange failed: ${(error as Error).message}`, {
      code: 'credential_exchange_failed',
      retryable: true,
    });
  }
  const parsed = exchange.parse(status, body);
  if (isUpstreamFailure(parsed)) return parsed;
  const lifeMs = Math.max(0, parsed.expiresInSeconds) * 1000;
  if (cached.size >= MAX_CACHED) cached.clear();
  cached.set(key, { credential: parsed.credential, renewAt: Date.now() + lifeMs - Math.min(RENEW_MARGIN_MS, lifeMs / 2) });
  return parsed.credential;
}

/**
 * Drops a cached credential the vendor refused (a Vertex AI access token
 * answered 401 UNAUTHENTICATED: revoked, or the key behind it rotated) so the
 * next call exchanges anew instead of failing until its renewal. Only that
 * credential: one a concurrent call already exchanged in its place stays.
 */
export function forgetCredential(adaptor: UpstreamAdaptor, channel: ChannelConfig, credential: string): void {
  if (!adaptor.credential) return;
  const key = cacheKeyOf(adaptor, channel);
  if (cached.get(key)?.credential === credential) cached.delete(key);
}

/** Forgets every cached credential (tests; a key edited in place leaves its old entry to expire). */
export function forgetCredentials(): void {
  cached.clear();
}
