// Keys that spend an organisation's money (auth: user, then the caller's
// standing in the organisation; common/organizations.ts): a member makes and
// sees their own, the owner and admins every key of the organisation, and
// site admins top the balance up. A key is a token of the organisation's
// account (repositories/organizationAccounts.ts); as on the token routes,
// lists mask the secret, which is shown on creation and by its /key route.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { effectiveTimeZone } from '../../../common/budgets';
import { canManageKeys, createKeyProblem, keyAccessProblem } from '../../../common/organizations';
import { Role, TokenStatus } from '../../../common/roles';
import type { Db } from '../../db/database';
import { callerOf, requireRole } from '../../plugins/auth';
import {
  accountOf,
  createAccountToken,
  deleteAccountToken,
  findAccountToken,
  listAccountTokens,
  setAccountTokenStatus,
  topUpAccount,
} from '../../repositories/organizationAccounts';
import { membershipOf } from '../../repositories/organizations';
import { pageWindowOf, positiveId } from '../../repositories/pagination';
import { toTokenRecord, type TokenRow } from '../../repositories/tokens';
import { usernames } from '../../repositories/users';
import { generateTokenKey } from '../../secrets';
import { keyById, keyCreateSchema, keyPage, keyStatusSchema, topUpSchema } from './organizationSchemas';
import { organizationNotFound, standingIn, type Standing } from './organizationStanding';
import { parseTokenFields } from './token';

const keyNotFound = () => fail('token not found', 'token_not_found');
const denied = (message: string) => fail(message, 'permission_denied');

/** The key as the token routes show it, with the member who holds it (0 and '' for a service key). */
async function keyRecords(db: Db, rows: TokenRow[], zone: string, revealKey = false) {
  const names = await usernames(db, [...new Set(rows.map((row) => Number(row.member_user_id ?? 0)).filter(Boolean))]);
  return rows.map((row) => ({
    ...toTokenRecord(row, revealKey, undefined, zone),
    member_user_id: Number(row.member_user_id ?? 0),
    member_username: names.get(Number(row.member_user_id ?? 0)) ?? '',
  }));
}

/** The organisation's account and one of its keys the caller may act on: the key, or the refusal. */
async function keyInReach(db: Db, standing: Standing, rawTokenId: unknown) {
  const account = await accountOf(db, standing.organization.id);
  const tokenId = positiveId(rawTokenId);
  const token = account && tokenId ? await findAccountToken(db, Number(account.id), tokenId) : undefined;
  if (!account || !token) return { refusal: keyNotFound() };
  // someone else's key is "not found" to a member, as another user's token is on the token routes
  if (keyAccessProblem(standing.actor, token.member_user_id === null ? null : Number(token.member_user_id)))
    return { refusal: keyNotFound() };
  return { account, token };
}

/** Why the key may not be enabled again; undefined when it may. */
async function enableProblem(db: Db, standing: Standing, token: TokenRow): Promise<string | undefined> {
  if (!standing.actor.organizationEnabled) return 'the organization is disabled';
  const memberId = token.member_user_id === null ? undefined : Number(token.member_user_id);
  if (memberId !== undefined && !(await membershipOf(db, standing.organization.id, memberId)))
    return 'the member who held this key has left the organization';
  const now = Math.floor(Date.now() / 1000);
  if (Number(token.expired_time) !== -1 && Number(token.expired_time) <= now) return 'the token has expired';
  if (Number(token.unlimited_quota) !== 1 && Number(token.remain_quota) <= 0) return 'the token quota is used up';
  return undefined;
}

export function keyRoutes(fastify: FastifyInstance): void {
  keyReadRoutes(fastify);
  keyWriteRoutes(fastify);
}

function keyReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const signedIn = requireRole(Role.user);
  const zone = () => effectiveTimeZone(options.get('TimeZone'));

  app.get('/api/organization/:id/token', { preHandler: signedIn, schema: keyPage }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const account = await accountOf(db, standing.organization.id);
    if (!account) return ok([]);
    const onlyMine = canManageKeys(standing.actor) ? undefined : standing.actor.userId;
    const rows = await listAccountTokens(db, Number(account.id), pageWindowOf(request.query), onlyMine);
    return ok(await keyRecords(db, rows, zone()));
  });

  app.get('/api/organization/:id/token/:tokenId/key', { preHandler: signedIn, schema: keyById }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const found = await keyInReach(db, standing, request.params.tokenId);
    return 'refusal' in found ? found.refusal : ok(found.token.key);
  });
}

function keyWriteRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect, options } = app.ctx;
  const signedIn = requireRole(Role.user);
  const admin = requireRole(Role.admin);
  const zone = () => effectiveTimeZone(options.get('TimeZone'));

  app.post('/api/organization/:id/token', { preHandler: signedIn, schema: keyCreateSchema }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const service = request.body.service === true || request.body.service === 'true';
    const problem = createKeyProblem(standing.actor, service);
    if (problem) return denied(problem);
    const parsed = parseTokenFields(request.body, true);
    if ('error' in parsed) return fail(parsed.error);
    const account = await accountOf(db, standing.organization.id);
    if (!account) return organizationNotFound();
    const memberId = service ? null : Number(callerOf(request).id);
    const id = await createAccountToken(db, dialect, Number(account.id), memberId, generateTokenKey(), parsed.value);
    const row = await findAccountToken(db, Number(account.id), id);
    return ok((await keyRecords(db, [row!], zone(), true))[0]);
  });

  // status only: an organisation's key is switched on or off here; its terms are set when it is made
  app.put('/api/organization/:id/token', { preHandler: signedIn, schema: keyStatusSchema }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const found = await keyInReach(db, standing, request.body.id);
    if ('refusal' in found) return found.refusal;
    const status = Number(request.body.status);
    if (status !== TokenStatus.enabled && status !== TokenStatus.disabled) return fail('a token can only be enabled or disabled');
    const problem = status === TokenStatus.enabled ? await enableProblem(db, standing, found.token) : undefined;
    if (problem) return fail(problem);
    await setAccountTokenStatus(db, Number(found.account.id), Number(found.token.id), status);
    const row = await findAccountToken(db, Number(found.account.id), Number(found.token.id));
    return ok((await keyRecords(db, [row!], zone()))[0]);
  });

  app.delete('/api/organization/:id/token/:tokenId', { preHandler: signedIn, schema: keyById }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const found = await keyInReach(db, standing, request.params.tokenId);
    if ('refusal' in found) return found.refusal;
    await deleteAccountToken(db, Number(found.account.id), Number(found.token.id));
    return ok();
  });

  app.post('/api/organization/:id/topup', { preHandler: admin, schema: topUpSchema }, async (request) => {
    const id = positiveId(request.params.id);
    const account = id ? await accountOf(db, id) : undefined;
    if (!account) return organizationNotFound();
    const amount = Number(request.body.quota);
    if (!Number.isSafeInteger(amount) || amount <= 0) return fail('quota must be a whole number above 0');
    await topUpAccount(db, account, amount, callerOf(request).username);
    return ok((await accountOf(db, id!))?.quota);
  });
}
