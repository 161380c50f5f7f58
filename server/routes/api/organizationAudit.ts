// An organisation's own audit rows, for its owner and admins (auth: user, then
// the caller's standing in the organisation): the calls made under
// /api/organization/:id, newest first. Site admins read every row at /api/audit/.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { canManageMembers } from '../../../common/organizations';
import { Role } from '../../../common/roles';
import { toAuditRecord } from '../../audit/chain';
import { requireRole } from '../../plugins/auth';
import { listAudit } from '../../repositories/auditLog';
import { pageWindowOf } from '../../repositories/pagination';
import { memberPage } from './organizationSchemas';
import { organizationNotFound, standingIn } from './organizationStanding';

export function organizationAuditRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;

  app.get('/api/organization/:id/audit', { preHandler: requireRole(Role.user), schema: memberPage }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    if (!canManageMembers(standing.actor))
      return fail('only the organisation owner and its admins read its audit log', 'permission_denied');
    const rows = await listAudit(db, { organization_id: standing.organization.id }, pageWindowOf(request.query));
    return ok(rows.map(toAuditRecord));
  });
}
