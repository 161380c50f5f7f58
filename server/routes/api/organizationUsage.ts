// An organisation's usage over a range (common/organizationUsage.ts; auth:
// user, then the caller's standing in the organisation): per member, per
// model and per key, from the usage rollups of the organisation's account as
// the dashboard reads them (repositories/usage.ts), never the logs. Each
// key's use of each model is read once; a key's member is the token's
// member_user_id now. Who sees what follows the keys: the owner, its admins
// and site admins every key (canManageKeys), a member their own keys only.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { UsageTotals } from '../../../common/dashboard';
import { fail, ok } from '../../../common/envelope';
import type { OrganizationUsage } from '../../../common/organizationUsage';
import { canManageKeys } from '../../../common/organizations';
import { Role } from '../../../common/roles';
import type { Db } from '../../db/database';
import { requireRole } from '../../plugins/auth';
import { accountKeyHolders, accountOf } from '../../repositories/organizationAccounts';
import { usageGroups } from '../../repositories/usage';
import { usernames } from '../../repositories/users';
import { paramsOf, rangeOf, sumOf, type DashboardParams } from './dashboard';
import { usageQuery } from './organizationSchemas';
import { organizationNotFound, standingIn } from './organizationStanding';

/** One key's use of one model over the range. */
interface KeyModelUse extends UsageTotals {
  tokenId: number;
  model: string;
  /** The member holding the key; 0 for a service key or a deleted one. */
  memberId: number;
}

/** The rows summed per `keyOf`, by quota, highest first (ties by key). */
function totalsBy<K extends string | number>(rows: readonly KeyModelUse[], keyOf: (row: KeyModelUse) => K): Array<[K, UsageTotals]> {
  const groups = new Map<K, KeyModelUse[]>();
  for (const row of rows) {
    const group = groups.get(keyOf(row));
    if (group) group.push(row);
    else groups.set(keyOf(row), [row]);
  }
  return [...groups]
    .map(([key, members]): [K, UsageTotals] => [key, sumOf(members)])
    .sort(([leftKey, left], [rightKey, right]) => right.quota - left.quota || String(leftKey).localeCompare(String(rightKey)));
}

/** The account's usage in the range; `onlyMemberId`: that member's keys only. */
async function usageOf(db: Db, accountId: number, params: DashboardParams, onlyMemberId?: number): Promise<OrganizationUsage> {
  const found = await usageGroups(db, { userId: accountId }, rangeOf(params), ['token_id', 'model']);
  const holders = await accountKeyHolders(db, accountId, [...new Set(found.map((row) => Number(row.token_id)))]);
  const rows: KeyModelUse[] = found
    .map((row) => ({ ...row, tokenId: Number(row.token_id), model: String(row.model) }))
    .map((row) => ({ ...row, memberId: holders.get(row.tokenId)?.memberUserId ?? 0 }))
    .filter((row) => onlyMemberId === undefined || row.memberId === onlyMemberId);
  const byMember = totalsBy(rows, (row) => row.memberId);
  const names = await usernames(db, byMember.map(([id]) => id).filter(Boolean));
  const byKey = totalsBy(rows, (row) => row.tokenId);
  return {
    start: params.start,
    end: params.end,
    granularity: params.granularity,
    scope: onlyMemberId === undefined ? 'organization' : 'own',
    totals: sumOf(rows),
    by_member: byMember.map(([id, totals]) => ({ user_id: id, username: names.get(id) ?? '', ...totals })),
    by_model: totalsBy(rows, (row) => row.model).map(([model, totals]) => ({ model, ...totals })),
    by_key: byKey.map(([id, totals]) => ({
      token_id: id,
      token_name: holders.get(id)?.name ?? '',
      member_user_id: holders.get(id)?.memberUserId ?? 0,
      ...totals,
    })),
  };
}

export function organizationUsageRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;

  app.get('/api/organization/:id/usage', { preHandler: requireRole(Role.user), schema: usageQuery }, async (request) => {
    const standing = await standingIn(db, request, request.params.id);
    if (!standing) return organizationNotFound();
    const { start_timestamp: start, end_timestamp: end } = request.query;
    const params = paramsOf({ start, end }, false, Math.floor(Date.now() / 1000));
    if (typeof params === 'string') return fail(params);
    const account = await accountOf(db, standing.organization.id);
    if (!account) return organizationNotFound();
    const onlyMine = canManageKeys(standing.actor) ? undefined : standing.actor.userId;
    return ok(await usageOf(db, Number(account.id), params, onlyMine));
  });
}
