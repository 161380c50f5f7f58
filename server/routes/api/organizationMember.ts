// An organisation's members (auth: user, then the caller's standing in the
// organisation: its owner and admins manage members, site admins everyone;
// see common/organizations.ts for the rules). Nobody here needs to be a site
// admin, so every route first finds the caller's standing in the organisation
// named by the path and never touches another.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import {
  addMemberProblem,
  canManageMembers,
  changeRoleProblem,
  isOrganizationRole,
  removeMemberProblem,
  type OrganizationRole,
} from '../../../common/organizations';
import { Role } from '../../../common/roles';
import { requireRole } from '../../plugins/auth';
import { addMember, listMembers, makeOwner, membershipOf, removeMember, setMemberRole } from '../../repositories/organizations';
import { pageWindowOf, positiveId } from '../../repositories/pagination';
import { memberAddSchema, memberPage, memberRemoveSchema, memberUpdateSchema } from './organizationSchemas';
import { isRefusal, organizationNotFound, personNamed, standingIn } from './organizationStanding';

const notMember = () => fail('the user is not a member of this organization', 'not_found');
const denied = (message: string) => fail(message, 'permission_denied');

export function memberRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.get('/api/organization/:id/member', { preHandler: signedIn, schema: memberPage }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    if (!canManageMembers(standing.actor)) return denied('only the organisation owner and its admins see its members');
    return ok(await listMembers(db, standing.organization.id, pageWindowOf(request.query)));
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
    const role = request.body.role;
    if (!isOrganizationRole(role)) return fail('role must be owner, admin or member');
    const userId = positiveId(request.body.user_id);
    const organizationId = standing.organization.id;
    const current = userId ? await membershipOf(db, organizationId, userId) : undefined;
    // an outsider's id says nothing to someone who may not see the members
    if (!canManageMembers(standing.actor)) return denied('only the organisation owner and its admins manage its members');
    if (!userId || !current) return notMember();
    const problem = changeRoleProblem(standing.actor, { userId, role: current }, role);
    if (problem) return denied(problem);
    if (role === 'owner') await makeOwner(db, organizationId, userId);
    else await setMemberRole(db, organizationId, userId, role);
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
