// Organisations (teams). Site admins list, create, edit and delete them,
// assign their owner and set their budget (auth: admin); any signed-in user
// sees the ones they belong to (auth: user, then the caller's standing in the
// organisation, see common/organizations.ts). An outsider asking for an
// organisation's id gets "not found", the same answer as for an id no
// organisation has. Members: organizationMember.ts; keys and top-ups:
// organizationKey.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { effectiveTimeZone, parseBudget } from '../../../common/budgets';
import { OrganizationStatus, type OrganizationRecord } from '../../../common/organizations';
import { Role } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import {
  createOrganization,
  deleteOrganization,
  findOrganization,
  listOrganizations,
  makeOwner,
  memberCapsOf,
  organizationNameTaken,
  organizationsOfMember,
  searchOrganizations,
  updateOrganization,
} from '../../repositories/organizations';
import { accountOf, setAccountBudget, setAccountStatus } from '../../repositories/organizationAccounts';
import { pageWindowOf, positiveId } from '../../repositories/pagination';
import { organizationAuditRoutes } from './organizationAudit';
import { keyRoutes } from './organizationKey';
import { organizationUsageRoutes } from './organizationUsage';
import { memberRoutes } from './organizationMember';
import {
  organizationById,
  organizationCreateSchema,
  organizationPage,
  organizationSearch,
  organizationUpdateSchema,
} from './organizationSchemas';
import { isRefusal, organizationNotFound, personNamed, standingIn } from './organizationStanding';

const NAME_MAX = 64;

/** A trimmed name of 1 to NAME_MAX characters, or the complaint. */
function nameOf(raw: unknown): { name: string } | { error: string } {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (!name || [...name].length > NAME_MAX) return { error: `organization name length must be 1-${NAME_MAX}` };
  return { name };
}

/** The budget an edit sets, when it names one (parsed as a user's: common/budgets.ts). */
function budgetOf(body: { budget_period?: unknown; budget_quota?: unknown }, organization: OrganizationRecord) {
  if (body.budget_period === undefined && body.budget_quota === undefined) return undefined;
  return parseBudget(body.budget_period ?? organization.budget_period, body.budget_quota ?? organization.budget_quota);
}

function statusOf(raw: unknown): number | undefined {
  const status = Number(raw);
  return status === OrganizationStatus.enabled || status === OrganizationStatus.disabled ? status : undefined;
}

export function organizationRoutes(fastify: FastifyInstance): Promise<void> {
  siteReadRoutes(fastify);
  siteWriteRoutes(fastify);
  memberRoutes(fastify);
  keyRoutes(fastify);
  organizationAuditRoutes(fastify);
  organizationUsageRoutes(fastify);
  return Promise.resolve();
}

/** Every organisation (site admins), the caller's own (anyone signed in) and one organisation. */
function siteReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);
  const signedIn = requireRole(Role.user);

  app.get('/api/organization/', { preHandler: admin, schema: organizationPage }, async (request) =>
    ok(await listOrganizations(db, pageWindowOf(request.query))),
  );

  app.get('/api/organization/search', { preHandler: admin, schema: organizationSearch }, async (request) =>
    ok(await searchOrganizations(db, (request.query.keyword ?? '').trim())),
  );

  app.get('/api/organization/self', { preHandler: signedIn }, async (request) =>
    ok(await organizationsOfMember(db, Number(callerOf(request).id))),
  );

  app.get('/api/organization/:id', { preHandler: signedIn, schema: organizationById }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const { organization, actor } = standing;
    // a member sees their own caps and spend (member_cap); a site admin from outside has none
    const memberCap = actor.membership
      ? await memberCapsOf(db, organization.id, actor.userId, effectiveTimeZone(app.ctx.options.get('TimeZone')))
      : undefined;
    return ok({ ...organization, role: actor.membership ?? null, member_cap: memberCap ?? null });
  });
}

/** Create, edit (name, status, owner) and delete organisations (site admins). */
function siteWriteRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect } = app.ctx;
  const admin = requireRole(Role.admin);

  app.post('/api/organization/', { preHandler: admin, schema: organizationCreateSchema }, async (request) => {
    const named = nameOf(request.body.name);
    if ('error' in named) return fail(named.error);
    const status = request.body.status === undefined ? OrganizationStatus.enabled : statusOf(request.body.status);
    if (status === undefined) return fail('status must be 1 (enabled) or 2 (disabled)');
    const owner = await personNamed(db, request.body.owner);
    if (isRefusal(owner)) return owner;
    if (await organizationNameTaken(db, named.name)) return fail('organization name already taken');
    const id = await createOrganization(db, dialect, { name: named.name, status, ownerId: Number(owner.id) });
    return ok(await findOrganization(db, id));
  });

  app.put('/api/organization/', { preHandler: admin, schema: organizationUpdateSchema }, async (request) => {
    const body = request.body;
    const id = positiveId(body.id);
    const organization = id ? await findOrganization(db, id) : undefined;
    if (!id || !organization) return organizationNotFound();
    const patch: { name?: string; status?: number } = {};
    if (body.name !== undefined) {
      const named = nameOf(body.name);
      if ('error' in named) return fail(named.error);
      if (await organizationNameTaken(db, named.name, id)) return fail('organization name already taken');
      patch.name = named.name;
    }
    if (body.status !== undefined) {
      patch.status = statusOf(body.status);
      if (patch.status === undefined) return fail('status must be 1 (enabled) or 2 (disabled)');
    }
    const owner = body.owner === undefined || body.owner === organization.owner_username ? undefined : await personNamed(db, body.owner);
    if (isRefusal(owner)) return owner;
    const budget = budgetOf(body, organization);
    if (budget && 'error' in budget) return fail(budget.error);
    await updateOrganization(db, id, patch);
    if (patch.status !== undefined) await setAccountStatus(db, id, patch.status);
    const account = budget ? await accountOf(db, id) : undefined;
    if (budget && account) await setAccountBudget(db, account, budget.value);
    if (owner) await makeOwner(db, id, Number(owner.id));
    return ok(await findOrganization(db, id));
  });

  app.delete('/api/organization/:id', { preHandler: admin, schema: organizationById }, async (request) => {
    const id = positiveId(request.params.id);
    return id && (await deleteOrganization(db, id)) ? ok() : organizationNotFound();
  });
}
