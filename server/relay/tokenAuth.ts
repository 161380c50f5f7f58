// Relay authentication: `Authorization: Bearer sk-<key>[-<channel id>]`. The
// token must be enabled, unexpired and not exhausted (expiry and exhaustion
// are recorded on the token), its owner enabled, and the caller's IP allowed.
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { isIP } from 'node:net';
import { Role, TokenStatus, UserStatus } from '../../common/roles';
import type { QuotaLedger } from '../billing/quota';
import type { Database } from '../db/database';
import { markTokenExhaustedIfSpent, markTokenExpired, tokenAndOwnerByKey, type MemberCapRow } from '../repositories/relayAuth';
import type { TokenRow } from '../repositories/tokens';
import type { UserRow } from '../repositories/users';
import { relayError, type RelayError } from './errors';
import { tokenExhaustedEvent } from '../webhooks/triggers';
import type { CachedCaller, RelayCache } from './relayCache';

export interface RelayCaller {
  token: TokenRow;
  user: UserRow;
  /** An admin may pin a channel with `sk-<key>-<id>`. */
  pinnedChannelId?: number;
  /** The caps of the member holding an organisation's key (none for a service key or any other key). */
  member?: MemberCapRow;
}

function ipToBigInt(address: string): { family: 4 | 6; value: bigint } | undefined {
  const family = isIP(address);
  if (family === 4) return { family: 4, value: address.split('.').reduce((sum, part) => (sum << 8n) + BigInt(Number(part)), 0n) };
  if (family === 6) {
    const [head, tail = ''] = address.split('::');
    const headParts = head ? head.split(':') : [];
    const tailParts = tail ? tail.split(':') : [];
    const parts = address.includes('::')
      ? [...headParts, ...new Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts]
      : headParts;
    return { family: 6, value: parts.reduce((sum, part) => (sum << 16n) + BigInt(Number.parseInt(part || '0', 16)), 0n) };
  }
  return undefined;
}

/** Whether `ip` matches one of the comma-separated addresses or CIDR ranges. */
export function ipAllowed(ip: string, allowlist: string | null): boolean {
  if (!allowlist) return true;
  const client = ipToBigInt(ip.startsWith('::ffff:') ? ip.slice(7) : ip);
  if (!client) return false;
  return allowlist.split(',').some((entry) => {
    const [address, prefixText] = entry.split('/');
    const range = ipToBigInt(address);
    if (!range || range.family !== client.family) return false;
    const bits = client.family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? bits : Number(prefixText);
    const shift = BigInt(bits - prefix);
    return client.value >> shift === range.value >> shift;
  });
}

function loadCaller(db: Kysely<Database>, key: string): Promise<CachedCaller | undefined> {
  return tokenAndOwnerByKey(db, key);
}

/**
 * Checks the key of a relayed request. With a cache (the hot JSON routes) the
 * token and its owner come from memory when fresh; every check still runs.
 * The answer is synchronous when the cache had the key and nothing had to be
 * written, so the hot path pays for no promise; otherwise it is a promise.
 */
export function authenticateRelay(
  db: Kysely<Database>,
  request: Pick<FastifyRequest, 'ip'> & { headers: { authorization?: string } },
  cache?: RelayCache,
  ledger?: Pick<QuotaLedger, 'freeFor'>,
): RelayCaller | RelayError | Promise<RelayCaller | RelayError> {
  const header = request.headers.authorization ?? '';
  const raw = header.startsWith('Bearer ') ? header.slice(7).trim() : header.trim();
  const withoutPrefix = raw.startsWith('sk-') ? raw.slice(3) : raw;
  const [key, pin] = withoutPrefix.split('-');
  if (!key) return relayError(401, 'no API key provided, use Authorization: Bearer sk-...', 'invalid_api_key');
  const found = cache ? cache.caller(key, () => loadCaller(db, key)) : loadCaller(db, key);
  return found instanceof Promise
    ? found.then((loaded) => checkCaller(db, request.ip, loaded, pin, ledger))
    : checkCaller(db, request.ip, found, pin, ledger);
}

function checkCaller(
  db: Kysely<Database>,
  ip: string,
  found: CachedCaller | undefined,
  pin: string | undefined,
  ledger?: Pick<QuotaLedger, 'freeFor'>,
): RelayCaller | RelayError | Promise<RelayError> {
  if (!found) return relayError(401, 'invalid API key', 'invalid_api_key');
  const { token, user } = found;
  const now = Math.floor(Date.now() / 1000);
  if (Number(token.status) === TokenStatus.enabled && Number(token.expired_time) !== -1 && Number(token.expired_time) < now) {
    return markTokenExpired(db, token.id).then(() => relayError(401, 'this API key has expired', 'token_expired'));
  }
  if (
    Number(token.status) === TokenStatus.enabled &&
    Number(token.unlimited_quota) !== 1 &&
    Number(token.remain_quota) <= 0 &&
    !heldFreeHere(ledger, found)
  ) {
    return markExhaustedIfSpent(db, token);
  }
  if (Number(token.status) !== TokenStatus.enabled)
    return relayError(401, 'this API key is disabled, expired or used up', 'token_unavailable');
  if (!user || Number(user.status) !== UserStatus.enabled)
    return relayError(403, 'the account of this API key is disabled', 'user_disabled', 'permission_error');
  if (!ipAllowed(ip, token.allowed_ips))
    return relayError(403, `this API key may not be used from ${ip}`, 'ip_not_allowed', 'permission_error');
  let pinnedChannelId: number | undefined;
  if (pin !== undefined) {
    if (Number(user.role) < Role.admin)
      return relayError(403, 'only admins may pin a channel', 'channel_pin_forbidden', 'permission_error');
    pinnedChannelId = Number(pin);
    if (!Number.isSafeInteger(pinnedChannelId) || pinnedChannelId <= 0)
      return relayError(400, `not a channel id: ${pin}`, 'invalid_channel');
  }
  return found.member ? { token, user, pinnedChannelId, member: found.member } : { token, user, pinnedChannelId };
}

/** Whether this node's ledger holds some of the key's quota free (a quota lease took what the row shows as spent). */
function heldFreeHere(ledger: Pick<QuotaLedger, 'freeFor'> | undefined, { token }: CachedCaller): boolean {
  if (!ledger?.freeFor) return false;
  return ledger.freeFor({ userId: Number(token.user_id), tokenId: Number(token.id), limitedToken: true }) > 0;
}

/** Seconds a client is told to wait when a key's quota is only held by requests in flight. */
const HELD_RETRY_AFTER_SECONDS = 2;

/**
 * A limited key that shows nothing left. It is exhausted only if its balance
 * is really spent, nothing held by requests in flight included, as the
 * database says at this moment (the row at hand may be stale): then it is
 * marked so. While requests hold its quota it may get some back, so the
 * caller is told to retry and the key stays enabled.
 */
async function markExhaustedIfSpent(db: Kysely<Database>, token: CachedCaller['token']): Promise<RelayError> {
  const tokenId = Number(token.id);
  if (await markTokenExhaustedIfSpent(db, tokenId)) {
    // this request flipped it, so the event is written once whichever node saw the key spent
    await tokenExhaustedEvent(db, console, { id: tokenId, name: token.name, user_id: Number(token.user_id) });
    return relayError(429, 'the quota of this API key is used up', 'insufficient_quota', 'insufficient_quota');
  }
  const error = relayError(
    429,
    'the quota of this API key is held by requests in flight; try again shortly',
    'insufficient_quota',
    'insufficient_quota',
  );
  error.retryAfter = HELD_RETRY_AFTER_SECONDS;
  return error;
}
