// Retention you can see (Settings → Operation → "Stored rows and retention"):
// GET answers, per kind of stored rows, their count, size on disk, retention
// and last prune, with the prune running now or the last one; POST /prune
// starts a prune at once in the background (billing/retentionJob.ts). Admins
// may do both: whoever may set the retention options may apply them now,
// as the hourly schedule would within the hour anyway.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { fail, ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import { retentionReport } from '../../billing/retentionReport';
import { startPrune } from '../../billing/retentionJob';
import { requireRole } from '../../plugins/auth';
import { retentionDepsOf } from '../../plugins/retention';

const reportSchema = {
  querystring: Type.Unsafe<{ fresh?: 'true' | 'false' }>({
    type: 'object',
    properties: { fresh: { type: 'string', enum: ['true', 'false'], description: 'true or false' } },
    maxProperties: 4,
    description: 'a JSON object',
  }),
};

export function retentionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const admin = requireRole(Role.admin);
  const deps = retentionDepsOf(fastify);

  // `fresh`: count the rows again now rather than answer the counts of the last minute
  app.get('/api/retention/', { preHandler: admin, schema: reportSchema }, async (request) =>
    ok(await retentionReport(deps, request.query.fresh === 'true')),
  );

  app.post('/api/retention/prune', { preHandler: admin }, async () => {
    const outcome = await startPrune(deps, true);
    if (!outcome) return fail('every kind of row is kept forever: set a retention in days first, then prune');
    return ok(outcome, outcome.started ? '' : 'a prune is already running');
  });
  return Promise.resolve();
}
