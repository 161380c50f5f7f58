// Relay tokens (auth: user; always scoped to the caller). Lists mask the key;
// the full key is returned once on creation and by GET /api/token/:id/key.
import { isIP } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { fail, ok } from '../../../common/envelope';
import { Role, TokenStatus } from '../../../common/roles';
import type { Database } from '../../db/database';
import { callerOf, requireRole } from '../../plugins/auth';
import type { AppContext } from '../../plugins/context';
import type { BulkAction, BulkResult } from '../../../common/listQuery';
import { pageWindowOf, positiveId, sortOf } from '../../repositories/pagination';
import {
  createToken,
  deleteOwnToken,
  findOwnToken,
  listTokens,
  searchTokens,
  toTokenRecord,
  updateOwnToken,
  type TokenFields,
  type TokenRow,
} from '../../repositories/tokens';
import { parseConcurrencyLimit, userConcurrencyLimit } from '../../relay/concurrency';
import { parseGroupRateLimits, parseRateLimitOverride, userRateLimits, type RateLimitPair } from '../../../common/rateLimits';
import { effectiveTimeZone, parseBudget } from '../../../common/budgets';
import { generateTokenKey } from '../../secrets';
import { bulkSchema, byId, listed, searchedList, tokenCreateSchema, tokenUpdateSchema } from './inputSchemas';

export const DEFAULT_TOKEN_QUOTA = 500_000;
const NAME_MAX = 30;

type Parsed<T> = { value: T } | { error: string };

function commaList(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map((item) => String(item).trim()).filter(Boolean);
  if (typeof raw !== 'string') return [];
  return raw
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);
}

function validIpOrCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (!family) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

/** The name, the quota and the expiry; `creating` makes the name required and the expiry future. */
function parseTokenTerms(
  body: Record<string, unknown>,
  creating: boolean,
): { name: string; remain: number; expired: number } | { error: string } {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (creating && !name) return { error: 'token name is required' };
  if ([...name].length > NAME_MAX) return { error: `token name must be at most ${NAME_MAX} characters` };
  const remain = body.remain_quota === undefined ? DEFAULT_TOKEN_QUOTA : Number(body.remain_quota);
  if (!Number.isSafeInteger(remain) || remain < 0) return { error: 'remaining quota must be a whole number, 0 or more' };
  const expired = body.expired_time === undefined || body.expired_time === 0 ? -1 : Number(body.expired_time);
  if (!Number.isSafeInteger(expired) || (expired !== -1 && expired <= 0)) return { error: 'expiry format error' };
  if (creating && expired !== -1 && expired <= Math.floor(Date.now() / 1000)) return { error: 'expiry must be in the future' };
  return { name, remain, expired };
}

/** The key's limits (concurrency, rpm, tpm), each narrowing the owner's ceiling when it is among the `changed` fields. */
function parseTokenLimits(
  body: Record<string, unknown>,
  ceilings: RateLimitPair & { concurrency?: number },
  changed: Record<string, unknown>,
) {
  const concurrency = parseConcurrencyLimit(body.concurrency_limit ?? 0, 'concurrency_limit' in changed ? ceilings.concurrency : Infinity);
  if ('error' in concurrency) return concurrency;
  const rpm = parseRateLimitOverride(body.rpm_limit, 'rpm', 'rpm_limit' in changed ? ceilings.rpm : 0);
  if ('error' in rpm) return rpm;
  const tpm = parseRateLimitOverride(body.tpm_limit, 'tpm', 'tpm_limit' in changed ? ceilings.tpm : 0);
  if ('error' in tpm) return tpm;
  return { concurrency_limit: concurrency.value, rpm_limit: rpm.value, tpm_limit: tpm.value };
}

/**
 * Reads the form's fields; `creating` makes the name required and the expiry
 * future. `ceilings` are the owner's own limits: a key's rate limit and
 * concurrency limit may only narrow them (checked for the fields in
 * `changed`, so an edit of something else never fails on a limit the owner's
 * group or an admin lowered since).
 */
export function parseTokenFields(
  body: Record<string, unknown>,
  creating: boolean,
  ceilings: RateLimitPair & { concurrency?: number } = { rpm: 0, tpm: 0 },
  changed: Record<string, unknown> = body,
): Parsed<TokenFields> {
  const terms = parseTokenTerms(body, creating);
  if ('error' in terms) return terms;
  const { name, remain, expired } = terms;
  const models = [...new Set(commaList(body.models))];
  const ips = [...new Set(commaList(body.allowed_ips))];
  const badIp = ips.find((entry) => !validIpOrCidr(entry));
  if (badIp) return { error: `not an IP address or CIDR range: ${badIp}` };
  const limits = parseTokenLimits(body, ceilings, changed);
  if ('error' in limits) return limits;
  const budget = parseBudget(body.budget_period, body.budget_quota);
  if ('error' in budget) return budget;
  return {
    value: {
      name,
      remain_quota: remain,
      unlimited_quota: body.unlimited_quota === true || body.unlimited_quota === 'true' ? 1 : 0,
      expired_time: expired,
      models: models.length ? models.join(',') : null,
      allowed_ips: ips.length ? ips.join(',') : null,
      concurrency_limit: limits.concurrency_limit,
      rpm_limit: limits.rpm_limit,
      tpm_limit: limits.tpm_limit,
      ...budget.value,
    },
  };
}

const statusFilterOf = ({ status }: { status?: string }) => ({ status: status === undefined ? undefined : Number(status) });

/** Why a token may not be enabled again (expired, used up); undefined when it may. */
function enableProblem(token: TokenRow): string | undefined {
  const now = Math.floor(Date.now() / 1000);
  const expiredTime = Number(token.expired_time);
  if (expiredTime !== -1 && expiredTime <= now) return 'the token has expired: change its expiry first';
  if (Number(token.unlimited_quota) !== 1 && Number(token.remain_quota) <= 0) return 'the token quota is used up: raise its quota first';
  return undefined;
}

/** The caller's own limits (their override, else their group's): what their keys' limits may narrow, and what the list shows in effect. */
function limitsOf(options: AppContext['options'], request: FastifyRequest) {
  return userRateLimits(callerOf(request), parseGroupRateLimits(options.get('GroupRateLimits')) ?? {});
}

/** What a key's fields may narrow: the rate limits above and the caller's concurrency limit in effect. */
function ceilingsOf(options: AppContext['options'], request: FastifyRequest) {
  return { ...limitsOf(options, request), concurrency: userConcurrencyLimit(callerOf(request), options) };
}

/** The operator's time zone, in which budgets reset. */
function zoneOf(options: AppContext['options']) {
  return effectiveTimeZone(options.get('TimeZone'));
}

/** One id of a bulk action on the caller's own tokens: why it failed, or undefined once done. */
async function applyBulkAction(db: Kysely<Database>, userId: number, id: number, action: BulkAction): Promise<string | undefined> {
  const token = await findOwnToken(db, userId, id);
  if (!token) return 'token not found';
  if (action === 'delete') {
    await deleteOwnToken(db, userId, id);
    return undefined;
  }
  const status = Number(token.status);
  if (status !== TokenStatus.enabled && status !== TokenStatus.disabled && action === 'disable') {
    // an expired or used-up token is already unusable; disabling it too would hide why
    return 'only an enabled token can be disabled';
  }
  const problem = action === 'enable' ? enableProblem(token) : undefined;
  if (problem) return problem;
  await updateOwnToken(db, userId, id, { status: action === 'enable' ? TokenStatus.enabled : TokenStatus.disabled });
  return undefined;
}

/** An edit of a token's fields (not a status-only one): the complaint, or undefined once stored. */
async function editTokenFields(
  db: Kysely<Database>,
  userId: number,
  token: TokenRow,
  body: Static<typeof tokenUpdateSchema.body>,
  ceilings: RateLimitPair & { concurrency?: number },
): Promise<string | undefined> {
  const id = Number(body.id);
  const parsed = parseTokenFields({ ...toTokenRecord(token, true), ...body, name: body.name ?? token.name }, false, ceilings, body);
  if ('error' in parsed) return parsed.error;
  const fields = parsed.value;
  // an edit that fixes what expired or exhausted the token makes it usable again
  const now = Math.floor(Date.now() / 1000);
  const usable = (fields.expired_time === -1 || fields.expired_time > now) && (fields.unlimited_quota === 1 || fields.remain_quota > 0);
  const status =
    (Number(token.status) === TokenStatus.expired || Number(token.status) === TokenStatus.exhausted) && usable
      ? TokenStatus.enabled
      : Number(token.status);
  // a budget of another period starts with nothing spent: the spend on record was of the old one
  const spend = fields.budget_period !== token.budget_period ? { period_spent: 0, period_start: 0 } : {};
  await updateOwnToken(db, userId, id, { ...fields, ...spend, status });
  return undefined;
}

export function tokenRoutes(fastify: FastifyInstance): Promise<void> {
  tokenReadRoutes(fastify);
  tokenWriteRoutes(fastify);
  return Promise.resolve();
}

/** The caller's tokens: the list, the search, one token and its key. */
function tokenReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.get('/api/token/', { preHandler: signedIn, schema: listed('token') }, async (request) => {
    const rows = await listTokens(
      db,
      Number(callerOf(request).id),
      pageWindowOf(request.query),
      sortOf('token', request.query),
      statusFilterOf(request.query),
    );
    return ok(rows.map((row) => toTokenRecord(row, false, limitsOf(options, request), zoneOf(options))));
  });

  app.get('/api/token/search', { preHandler: signedIn, schema: searchedList('token') }, async (request) => {
    const keyword = (request.query.keyword ?? '').trim();
    const rows = await searchTokens(
      db,
      Number(callerOf(request).id),
      keyword,
      sortOf('token', request.query),
      statusFilterOf(request.query),
    );
    return ok(rows.map((row) => toTokenRecord(row, false, limitsOf(options, request), zoneOf(options))));
  });

  app.get('/api/token/:id', { preHandler: signedIn, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findOwnToken(db, Number(callerOf(request).id), id) : undefined;
    return row ? ok(toTokenRecord(row, false, limitsOf(options, request), zoneOf(options))) : fail('token not found', 'token_not_found');
  });

  app.get('/api/token/:id/key', { preHandler: signedIn, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findOwnToken(db, Number(callerOf(request).id), id) : undefined;
    return row ? ok(row.key) : fail('token not found', 'token_not_found');
  });
}

/** Create, edit and delete the caller's tokens, one at a time or many at once. */
function tokenWriteRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect, options } = app.ctx;
  const signedIn = requireRole(Role.user);

  // enable, disable or delete many of the caller's own tokens; another user's id is "not found", as on one
  app.post('/api/token/bulk', { preHandler: signedIn, schema: bulkSchema }, async (request) => {
    const { ids, action } = request.body;
    const userId = Number(callerOf(request).id);
    const result: BulkResult = { done: [], failed: [] };
    for (const id of [...new Set(ids)]) {
      const failure = await applyBulkAction(db, userId, id, action);
      if (failure) result.failed.push({ id, message: failure });
      else result.done.push(id);
    }
    return ok(result);
  });

  app.post('/api/token/', { preHandler: signedIn, schema: tokenCreateSchema }, async (request) => {
    const parsed = parseTokenFields(request.body, true, ceilingsOf(options, request));
    if ('error' in parsed) return fail(parsed.error);
    const userId = Number(callerOf(request).id);
    const id = await createToken(db, dialect, userId, generateTokenKey(), parsed.value);
    const row = await findOwnToken(db, userId, id);
    request.audit({ targetId: id, after: row });
    return ok(toTokenRecord(row!, true, limitsOf(options, request), zoneOf(options)));
  });

  app.put('/api/token/', { preHandler: signedIn, schema: tokenUpdateSchema }, async (request) => {
    const body = request.body;
    const userId = Number(callerOf(request).id);
    const id = Number(body.id);
    const token = positiveId(id) ? await findOwnToken(db, userId, id) : undefined;
    if (!token) return fail('token not found', 'token_not_found');
    const statusOnly = Boolean(request.query.status_only);
    if (statusOnly) {
      const status = Number(body.status);
      if (status !== TokenStatus.enabled && status !== TokenStatus.disabled) return fail('a token can only be enabled or disabled');
      const problem = status === TokenStatus.enabled ? enableProblem(token) : undefined;
      if (problem) return fail(problem);
      await updateOwnToken(db, userId, id, { status });
    } else {
      const failure = await editTokenFields(db, userId, token, body, ceilingsOf(options, request));
      if (failure) return fail(failure);
    }
    const updated = await findOwnToken(db, userId, id);
    request.audit({ before: token, after: updated });
    return ok(toTokenRecord(updated!, false, limitsOf(options, request), zoneOf(options)));
  });

  app.delete('/api/token/:id', { preHandler: signedIn, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    // the row as it was, for the audit log
    const before = id ? await findOwnToken(db, Number(callerOf(request).id), id) : undefined;
    const deleted = id ? await deleteOwnToken(db, Number(callerOf(request).id), id) : false;
    if (deleted) request.audit({ before });
    return deleted ? ok() : fail('token not found', 'token_not_found');
  });
}
