// User administration (auth: admin) and the caller's access token and invite
// code. Nobody acts on a user of equal or higher role, except root; root
// itself can never be demoted, banned or deleted. Lists never carry secrets.
import { hashPassword } from '../../passwords';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { fail, ok, type Envelope } from '../../../common/envelope';
import { LogType, Role, UserStatus } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import type { AppContext } from '../../plugins/context';
import { insertLog } from '../../repositories/logs';
import { pageWindowOf, positiveId, sortOf } from '../../repositories/pagination';
import {
  createUser,
  deleteUser,
  findPersonByUsername,
  findUserById,
  findUserByUsername,
  listUsers,
  searchUsers,
  setAffCodeIfUnset,
  toUserRecord,
  updateUser,
  type UserPatch,
  type UserRow,
} from '../../repositories/users';
import { effectiveTimeZone, parseBudget, type BudgetFields } from '../../../common/budgets';
import { parseRateLimitOverride } from '../../../common/rateLimits';
import { parseConcurrencyLimit } from '../../relay/concurrency';
import { generateAccessToken, generateAffCode, hashAccessToken } from '../../secrets';
import { deleteFilesOf } from '../../services/fileStore';
import { appFileStore } from '../../services/s3FileStore';
import { passwordProblem, usernameProblem } from './user';
import { byId, listed, searchedList, userCreateSchema, userManageSchema, userUpdateSchema } from './inputSchemas';

const GROUP_PATTERN = /^[A-Za-z0-9_-]{1,32}(,[A-Za-z0-9_-]{1,32})*$/;

/** May `caller` act on `target`? Root may act on anyone; others only on lower roles. */
function outranks(caller: UserRow, target: UserRow): boolean {
  return Number(caller.role) >= Role.root || Number(caller.role) > Number(target.role);
}

/** The operator's time zone, in which budgets reset. */
function zoneOf(options: AppContext['options']) {
  return effectiveTimeZone(options.get('TimeZone'));
}

const userFilterOf = ({ role, status }: { role?: string; status?: string }) => ({
  role: role === undefined ? undefined : Number(role),
  status: status === undefined ? undefined : Number(status),
});

/** The body of an admin's edit of a user (PUT /api/user/), as its schema lets it through. */
type UserEditBody = Static<typeof userUpdateSchema.body>;

/** A part of an edit: the fields it changes, or the refusal of the whole edit. */
type PatchStep = { patch: UserPatch } | { refusal: Envelope<never> };

/** The edit's sign-in fields: username, display name and password (a new one signs the user out everywhere). */
async function accountPatchOf(ctx: AppContext, target: UserRow, body: UserEditBody): Promise<PatchStep> {
  const patch: UserPatch = {};
  if (typeof body.username === 'string' && body.username.trim() && body.username.trim() !== target.username) {
    const username = body.username.trim();
    const problem = usernameProblem(username);
    if (problem) return { refusal: fail(problem) };
    if (await findUserByUsername(ctx.db, username)) return { refusal: fail('username already taken', 'username_taken') };
    patch.username = username;
  }
  if (typeof body.display_name === 'string') patch.display_name = body.display_name.trim().slice(0, 20) || target.username;
  if (typeof body.password === 'string' && body.password !== '') {
    const problem = passwordProblem(body.password);
    if (problem) return { refusal: fail(problem) };
    patch.password_hash = await hashPassword(body.password, ctx.config.passwordHashCost);
    patch.session_version = Number(target.session_version) + 1;
  }
  return { patch };
}

/** The edit's allowance: group, quota, concurrency and rate limits, budget. */
function allowancePatchOf(target: UserRow, body: UserEditBody): PatchStep {
  const patch: UserPatch = {};
  if (body.group !== undefined) {
    const group = String(body.group).trim() || 'default';
    if (!GROUP_PATTERN.test(group)) return { refusal: fail('group names may contain letters, digits, "_" and "-"') };
    patch.group = group;
  }
  if (body.quota !== undefined) {
    const quota = Number(body.quota);
    if (!Number.isSafeInteger(quota) || quota < 0) return { refusal: fail('quota must be a whole number, 0 or more') };
    patch.quota = quota;
  }
  if (body.concurrency_limit !== undefined) {
    const concurrency = parseConcurrencyLimit(body.concurrency_limit);
    if ('error' in concurrency) return { refusal: fail(concurrency.error) };
    patch.concurrency_limit = concurrency.value;
  }
  for (const name of ['rpm', 'tpm'] as const) {
    const field = `${name}_limit` as const;
    if (body[field] === undefined) continue;
    const limit = parseRateLimitOverride(body[field], name);
    if ('error' in limit) return { refusal: fail(limit.error) };
    patch[field] = limit.value;
  }
  if (body.budget_period !== undefined || body.budget_quota !== undefined) {
    const budget = parseBudget(body.budget_period ?? target.budget_period, body.budget_quota ?? target.budget_quota);
    if ('error' in budget) return { refusal: fail(budget.error) };
    Object.assign(patch, budget.value);
    // a budget of another period starts with nothing spent: the spend on record was of the old one
    if (budget.value.budget_period !== target.budget_period) Object.assign(patch, { period_spent: 0, period_start: 0 });
  }
  return { patch };
}

/** The body of an admin's create (POST /api/user/), as its schema lets it through. */
type UserCreateBody = Static<typeof userCreateSchema.body>;

/** What a new user starts with, or the refusal of the create. */
type NewAllowance = { allowance: { quota: number; group: string; budget: BudgetFields } } | { refusal: Envelope<never> };

/**
 * A new user's quota (the new-user quota unless given), group ('default' unless
 * given; one that exists: 'default' or a group GroupRatio names) and budget
 * (none unless given; the edit's rules).
 */
function newAllowanceOf(options: AppContext['options'], body: UserCreateBody): NewAllowance {
  let quota = options.number('QuotaForNewUser');
  if (body.quota !== undefined && body.quota !== null) {
    quota = Number(body.quota);
    if (!Number.isSafeInteger(quota) || quota < 0) return { refusal: fail('quota must be a whole number, 0 or more') };
  }
  const group = typeof body.group === 'string' && body.group.trim() ? body.group.trim() : 'default';
  const groups = Object.keys(options.json('GroupRatio'));
  if (group !== 'default' && !groups.includes(group)) {
    return { refusal: fail(`group "${group}" does not exist: use "default" or a group the group ratios (GroupRatio) name`) };
  }
  const budget = parseBudget(body.budget_period, body.budget_quota);
  if ('error' in budget) return { refusal: fail(budget.error) };
  return { allowance: { quota, group, budget: budget.value } };
}

export function userAdminRoutes(fastify: FastifyInstance): Promise<void> {
  userReadRoutes(fastify);
  userEditRoutes(fastify);
  userManageRoutes(fastify);
  ownCredentialRoutes(fastify);
  return Promise.resolve();
}

/** The user list, the search and one user (admin). */
function userReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const admin = requireRole(Role.admin);

  app.get('/api/user/', { preHandler: admin, schema: listed('user') }, async (request) =>
    ok(
      (await listUsers(db, pageWindowOf(request.query), sortOf('user', request.query), userFilterOf(request.query))).map((row) =>
        toUserRecord(row, zoneOf(options)),
      ),
    ),
  );

  app.get('/api/user/search', { preHandler: admin, schema: searchedList('user') }, async (request) => {
    const keyword = (request.query.keyword ?? '').trim();
    return ok(
      (await searchUsers(db, keyword, sortOf('user', request.query), userFilterOf(request.query))).map((row) =>
        toUserRecord(row, zoneOf(options)),
      ),
    );
  });

  app.get('/api/user/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = Number(request.params.id);
    const target = positiveId(id) ? await findUserById(db, id) : undefined;
    if (!target) return fail('user not found', 'user_not_found');
    if (!outranks(callerOf(request), target)) return fail('cannot read a user of the same or higher level', 'outranked');
    return ok(toUserRecord(target, zoneOf(options)));
  });
}

/** Create, edit and delete a user (admin). */
function userEditRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect, options } = app.ctx;
  const admin = requireRole(Role.admin);

  app.post('/api/user/', { preHandler: admin, schema: userCreateSchema }, async (request) => {
    const body = request.body;
    const username = typeof body.username === 'string' ? body.username.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) return fail(problem);
    if (await findUserByUsername(db, username)) return fail('username already taken', 'username_taken');
    const start = newAllowanceOf(options, body);
    if ('refusal' in start) return start.refusal;
    const displayName =
      typeof body.display_name === 'string' && body.display_name.trim() ? body.display_name.trim().slice(0, 20) : username;
    request.audit({ after: { username, display_name: displayName } });
    // always role 1: an admin is made by root's promote, never at creation
    await createUser(db, dialect, {
      username,
      displayName,
      passwordHash: await hashPassword(password, app.ctx.config.passwordHashCost),
      ...start.allowance,
    });
    return ok();
  });

  app.put('/api/user/', { preHandler: admin, schema: userUpdateSchema }, async (request) => {
    const caller = callerOf(request);
    const body = request.body;
    const id = Number(body.id);
    const target = positiveId(id) ? await findUserById(db, id) : undefined;
    if (!target) return fail('user not found', 'user_not_found');
    if (!outranks(caller, target)) return fail('cannot update a user of the same or higher level', 'outranked');
    const account = await accountPatchOf(app.ctx, target, body);
    if ('refusal' in account) return account.refusal;
    const allowance = allowancePatchOf(target, body);
    if ('refusal' in allowance) return allowance.refusal;
    const patch: UserPatch = { ...account.patch, ...allowance.patch };
    await updateUser(db, id, patch);
    request.audit({ before: target, after: { ...target, ...patch } });
    if (patch.quota !== undefined && patch.quota !== Number(target.quota)) {
      await insertLog(db, {
        userId: id,
        username: patch.username ?? target.username,
        type: LogType.manage,
        content: `${caller.username} changed the quota from ${Number(target.quota)} to ${patch.quota}`,
      });
    }
    return ok();
  });

  // one-api's route, which its console never called and ours does (the Delete button on a user's page):
  // the same rules as the delete action of /api/user/manage, with a real answer either way
  app.delete('/api/user/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = Number(request.params.id);
    const target = positiveId(id) ? await findUserById(db, id) : undefined;
    if (!target) return fail('user not found', 'user_not_found');
    if (!outranks(callerOf(request), target)) return fail('cannot delete a user of the same or higher level', 'outranked');
    if (Number(target.role) >= Role.root) return fail('cannot delete the super admin', 'root_protected');
    await deleteUser(db, id);
    await deleteFilesOf(db, appFileStore(app.ctx.config, db, app.log), id);
    request.audit({ before: target });
    return ok();
  });
}

/** One-api's manage actions: disable, enable, delete, promote, demote (admin). */
function userManageRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);

  app.post('/api/user/manage', { preHandler: admin, schema: userManageSchema }, async (request) => {
    const caller = callerOf(request);
    const body = request.body;
    const username = typeof body.username === 'string' ? body.username.trim() : '';
    const target = username ? await findPersonByUsername(db, username) : undefined;
    if (!target) return fail('user does not exist', 'user_not_found');
    if (!outranks(caller, target)) return fail('cannot manage a user of the same or higher level', 'outranked');
    request.audit({ targetId: Number(target.id), before: target });
    const targetIsRoot = Number(target.role) >= Role.root;
    const patch: UserPatch = {};
    switch (body.action) {
      case 'disable':
        if (targetIsRoot) return fail('cannot disable the super admin', 'root_protected');
        patch.status = UserStatus.disabled;
        break;
      case 'enable':
        patch.status = UserStatus.enabled;
        break;
      case 'delete':
        if (targetIsRoot) return fail('cannot delete the super admin', 'root_protected');
        await deleteUser(db, Number(target.id));
        await deleteFilesOf(db, appFileStore(app.ctx.config, db, app.log), Number(target.id));
        return ok({ role: Number(target.role), status: Number(target.status), deleted: true });
      case 'promote':
        if (Number(caller.role) < Role.root) return fail('only the super admin can promote', 'root_only');
        if (Number(target.role) >= Role.admin) return fail('the user is already an admin');
        patch.role = Role.admin;
        break;
      case 'demote':
        if (targetIsRoot) return fail('cannot demote the super admin', 'root_protected');
        if (Number(target.role) <= Role.user) return fail('the user is already a common user');
        patch.role = Role.user;
        break;
      default:
        return fail('unknown action');
    }
    await updateUser(db, Number(target.id), patch);
    request.audit({ after: { ...target, ...patch } });
    const updated = (await findUserById(db, Number(target.id)))!;
    return ok({ role: Number(updated.role), status: Number(updated.status) });
  });
}

/** The caller's own access token and invite code. */
function ownCredentialRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.get('/api/user/token', { preHandler: signedIn }, async (request) => {
    const token = generateAccessToken();
    await updateUser(db, Number(callerOf(request).id), { access_token_hash: hashAccessToken(token) });
    return ok(token);
  });

  app.get('/api/user/aff', { preHandler: signedIn }, async (request) => {
    const caller = callerOf(request);
    if (caller.aff_code) return ok(caller.aff_code);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const code = generateAffCode();
      try {
        await setAffCodeIfUnset(db, Number(caller.id), code);
        const stored = await findUserById(db, Number(caller.id));
        if (stored?.aff_code) return ok(stored.aff_code);
      } catch {
        // another user holds this code: try a new one
      }
    }
    return fail('could not create an invite code, please retry');
  });
}
