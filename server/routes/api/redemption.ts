// Redemption codes (auth: admin) and top-up (auth: user).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { RedemptionStatus, Role } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import { rateLimit } from '../../plugins/rateLimit';
import type { BulkResult } from '../../../common/listQuery';
import { pageWindowOf, positiveId, sortOf } from '../../repositories/pagination';
import {
  createRedemptions,
  deleteRedemption,
  findRedemption,
  listRedemptions,
  redeemCode,
  searchRedemptions,
  setRedemptionStatus,
  toRedemptionRecord,
  updateRedemption,
} from '../../repositories/redemptions';
import { generateRedemptionKey } from '../../secrets';
import { bulkSchema, byId, listed, redemptionCreateSchema, redemptionUpdateSchema, searchedList, topUpSchema } from './inputSchemas';

const NAME_MAX = 20;
const BATCH_MAX = 100;

const statusFilterOf = ({ status }: { status?: string }) => ({ status: status === undefined ? undefined : Number(status) });

function parseQuota(raw: unknown): number | undefined {
  const quota = Number(raw);
  return Number.isSafeInteger(quota) && quota > 0 ? quota : undefined;
}

export function redemptionRoutes(fastify: FastifyInstance): Promise<void> {
  redemptionReadRoutes(fastify);
  redemptionWriteRoutes(fastify);
  topUpRoutes(fastify);
  return Promise.resolve();
}

/** The list, the search, one code and its key (admin). */
function redemptionReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);

  app.get('/api/redemption/', { preHandler: admin, schema: listed('redemption') }, async (request) =>
    ok(
      (await listRedemptions(db, pageWindowOf(request.query), sortOf('redemption', request.query), statusFilterOf(request.query))).map(
        (row) => toRedemptionRecord(row),
      ),
    ),
  );

  app.get('/api/redemption/search', { preHandler: admin, schema: searchedList('redemption') }, async (request) => {
    const keyword = (request.query.keyword ?? '').trim();
    return ok(
      (await searchRedemptions(db, keyword, sortOf('redemption', request.query), statusFilterOf(request.query))).map((row) =>
        toRedemptionRecord(row),
      ),
    );
  });

  app.get('/api/redemption/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findRedemption(db, id) : undefined;
    return row ? ok(toRedemptionRecord(row)) : fail('redemption code not found', 'redemption_not_found');
  });

  app.get('/api/redemption/:id/key', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findRedemption(db, id) : undefined;
    return row ? ok(row.key) : fail('redemption code not found', 'redemption_not_found');
  });
}

/** Create, edit and delete codes, one at a time or many at once (admin). */
function redemptionWriteRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);

  // enable, disable or delete many codes; a used code keeps its status (it can still be deleted)
  app.post('/api/redemption/bulk', { preHandler: admin, schema: bulkSchema }, async (request) => {
    const { ids, action } = request.body;
    const result: BulkResult = { done: [], failed: [] };
    for (const id of [...new Set(ids)]) {
      if (action === 'delete') {
        if (await deleteRedemption(db, id)) result.done.push(id);
        else result.failed.push({ id, message: 'redemption code not found' });
        continue;
      }
      const status = action === 'enable' ? RedemptionStatus.unused : RedemptionStatus.disabled;
      if (await setRedemptionStatus(db, id, status)) result.done.push(id);
      else
        result.failed.push({ id, message: (await findRedemption(db, id)) ? 'a used code cannot be changed' : 'redemption code not found' });
    }
    return ok(result);
  });

  app.post('/api/redemption/', { preHandler: admin, schema: redemptionCreateSchema }, async (request) => {
    const body = request.body;
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (!name || [...name].length > NAME_MAX) return fail(`name length must be 1-${NAME_MAX}`);
    const quota = parseQuota(body.quota);
    if (quota === undefined) return fail('quota must be a whole number above 0');
    const count = Number(body.count ?? 1);
    if (!Number.isSafeInteger(count) || count <= 0) return fail('count must be greater than 0');
    if (count > BATCH_MAX) return fail(`at most ${BATCH_MAX} codes per batch`);
    const now = Math.floor(Date.now() / 1000);
    const keys = Array.from({ length: count }, generateRedemptionKey);
    // all or nothing: a failure midway leaves no half-created batch
    await createRedemptions(db, Number(callerOf(request).id), { name, quota }, keys, now);
    request.audit({ after: { name, quota, count, key_tails: keys.map((key) => `***${key.slice(-4)}`) } });
    return ok(keys);
  });

  app.put('/api/redemption/', { preHandler: admin, schema: redemptionUpdateSchema }, async (request) => {
    const body = request.body;
    const id = Number(body.id);
    const code = positiveId(id) ? await findRedemption(db, id) : undefined;
    if (!code) return fail('redemption code not found', 'redemption_not_found');
    if (request.query.status_only) {
      const status = Number(body.status);
      if (Number(code.status) === RedemptionStatus.used) return fail('a used code cannot be changed');
      if (status !== RedemptionStatus.unused && status !== RedemptionStatus.disabled) return fail('a code can only be enabled or disabled');
      // conditional, so a code redeemed meanwhile stays used
      await setRedemptionStatus(db, id, status);
    } else {
      const name = typeof body.name === 'string' ? body.name.trim() : code.name;
      if (!name || [...name].length > NAME_MAX) return fail(`name length must be 1-${NAME_MAX}`);
      const quota = body.quota === undefined ? Number(code.quota) : parseQuota(body.quota);
      if (quota === undefined) return fail('quota must be a whole number above 0');
      await updateRedemption(db, id, { name, quota });
    }
    const updated = (await findRedemption(db, id))!;
    request.audit({ before: code, after: updated });
    return ok(toRedemptionRecord(updated));
  });

  app.delete('/api/redemption/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    return id && (await deleteRedemption(db, id)) ? ok() : fail('redemption code not found', 'redemption_not_found');
  });
}

/** A user redeems a code for quota. */
function topUpRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.post('/api/user/topup', { preHandler: [rateLimit('topUp'), signedIn], schema: topUpSchema }, async (request) => {
    const key = (request.body.key ?? '').trim();
    if (!key) return fail('please enter the code', 'code_required');
    const caller = callerOf(request);
    const result = await redeemCode(db, { id: Number(caller.id), username: caller.username }, key);
    return 'error' in result ? fail(`redeem failed: ${result.error}`) : ok(result.quota);
  });
}
