// An organisation's members (auth: user, then the caller's standing in the
// organisation: its owner and admins manage members and set their spending
// caps, site admins everyone;
// see common/organizations.ts for the rules). Nobody here needs to be a site
// admin, so every route first finds the caller's standing in the organisation
// named by the path and never touches another.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { effectiveTimeZone } from '../../../common/budgets';
import {
  addMemberProblem,
  canManageMembers,
  changeRoleProblem,
  isOrganizationRole,
  parseMemberCaps,
  removeMemberProblem,
  setCapProblem,
  type MemberCapFields,
  type OrganizationRole,
} from '../../../common/organizations';
import { Role } from '../../../common/roles';
import { requireRole } from '../../plugins/auth';
import {
  addMember,
  listMembers,
  makeOwner,
  memberCapsOf,
  membershipOf,
  removeMember,
  setMemberCaps,
  setMemberRole,
} from '../../repositories/organizations';
import { pageWindowOf, positiveId } from '../../repositories/pagination';
import { memberAddSchema, memberPage, memberRemoveSchema, memberUpdateSchema } from './organizationSchemas';
import { isRefusal, organizationNotFound, personNamed, standingIn } from './organizationStanding';

const notMember = () => fail('the user is not a member of this organization', 'not_found');
const denied = (message: string) => fail(message, 'permission_denied');

export function memberRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const signedIn = requireRole(Role.user);
  // the operator's time zone, in which a period cap resets
  const zone = () => effectiveTimeZone(options.get('TimeZone'));

  app.get('/api/organization/:id/member', { preHandler: signedIn, schema: memberPage }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    if (!canManageMembers(standing.actor)) return denied('only the organisation owner and its admins see its members');
    return ok(await listMembers(db, standing.organization.id, pageWindowOf(request.query), zone()));
  });

  app.post('/api/organization/:id/member', { preHandler: signedIn, schema: memberAddSchema }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const role: OrganizationRole = request.body.role ?? 'member';
    const problem = addMemberProblem(standing.actor, role);
    if (problem) return denied(problem);
    const user = await personNamed(db, request.body.username);
    if (isRefusal(user)) return user;
    const organizationId = standing.organization.id;
    if (await membershipOf(db, organizationId, Number(user.id))) return fail('the user is already a member of this organization');
    if (role === 'owner') await makeOwner(db, organizationId, Number(user.id));
    else await addMember(db, organizationId, Number(user.id), role);
    return ok();
  });

  app.put('/api/organization/:id/member', { preHandler: signedIn, schema: memberUpdateSchema }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const { body } = request;
    const role = body.role;
    const capsNamed = body.cap_quota !== undefined || body.cap_period !== undefined || body.cap_period_quota !== undefined;
    if (role === undefined && !capsNamed) return fail('name a role, or the caps cap_quota, cap_period and cap_period_quota');
    if (role !== undefined && !isOrganizationRole(role)) return fail('role must be owner, admin or member');
    const userId = positiveId(body.user_id);
    const organizationId = standing.organization.id;
    const current = userId ? await membershipOf(db, organizationId, userId) : undefined;
    // an outsider's id says nothing to someone who may not see the members
    if (!canManageMembers(standing.actor)) return denied('only the organisation owner and its admins manage its members');
    if (!userId || !current) return notMember();
    let caps: MemberCapFields | undefined;
    if (capsNamed) {
      const capProblem = setCapProblem(standing.actor, { userId, role: current });
      if (capProblem) return denied(capProblem);
      const before = (await memberCapsOf(db, organizationId, userId, zone()))!;
      const parsed = parseMemberCaps(body, before);
      if ('error' in parsed) return fail(parsed.error);
      caps = parsed.value;
      // the audit row names the member and shows their caps before and after
      const shown = (fields: MemberCapFields) => ({
        member: { user_id: userId, cap_quota: fields.cap_quota, cap_period: fields.cap_period, cap_period_quota: fields.cap_period_quota },
      });
      request.audit({ before: shown(before), after: shown(caps) });
    }
    const problem = role === undefined ? undefined : changeRoleProblem(standing.actor, { userId, role: current }, role);
    if (problem) return denied(problem);
    if (caps) await setMemberCaps(db, organizationId, userId, caps);
    if (role === 'owner') await makeOwner(db, organizationId, userId);
    else if (role !== undefined) await setMemberRole(db, organizationId, userId, role);
    return ok();
  });

  app.delete('/api/organization/:id/member/:userId', { preHandler: signedIn, schema: memberRemoveSchema }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const userId = positiveId(request.params.userId);
    const organizationId = standing.organization.id;
    const current = userId ? await membershipOf(db, organizationId, userId) : undefined;
    const leaving = userId === standing.actor.userId;
    if (!leaving && !canManageMembers(standing.actor)) return denied('only the organisation owner and its admins manage its members');
    if (!userId || !current) return notMember();
    const problem = removeMemberProblem(standing.actor, { userId, role: current });
    if (problem) return denied(problem);
    await removeMember(db, organizationId, userId);
    return ok();
  });
}
