// The caller's standing in an organisation, as common/organizations.ts judges
// it: read once per request from the organisation and the caller's membership.
import type { FastifyRequest } from 'fastify';
import { fail, type Envelope } from '../../../common/envelope';
import { UserStatus } from '../../../common/roles';
import { canViewOrganization, OrganizationStatus, type OrganizationActor, type OrganizationRecord } from '../../../common/organizations';
import type { Db } from '../../db/database';
import { callerOf } from '../../plugins/auth';
import { findOrganization, membershipOf } from '../../repositories/organizations';
import { positiveId } from '../../repositories/pagination';
import { findPersonByUsername, type UserRow } from '../../repositories/users';

export interface Standing {
  organization: OrganizationRecord;
  actor: OrganizationActor;
}

/** The refusal for an organisation that is missing or that the caller may not see: the same words, so ids reveal nothing. */
export const organizationNotFound = () => fail('organization not found', 'not_found');

/** The organisation and the caller's standing in it; undefined when it does not exist or the caller is an outsider. */
export async function standingIn(db: Db, request: FastifyRequest, rawId: unknown): Promise<Standing | undefined> {
  const id = positiveId(rawId);
  const organization = id ? await findOrganization(db, id) : undefined;
  if (!organization) return undefined;
  const caller = callerOf(request);
  const actor: OrganizationActor = {
    siteRole: Number(caller.role),
    userId: Number(caller.id),
    membership: await membershipOf(db, organization.id, Number(caller.id)),
    organizationEnabled: organization.status === OrganizationStatus.enabled,
  };
  return canViewOrganization(actor) ? { organization, actor } : undefined;
}

/**
 * A person who may join an organisation, by username: an enabled account that
 * is not itself an organisation's account (findPersonByUsername).
 */
export async function personNamed(db: Db, rawUsername: unknown): Promise<UserRow | Envelope<never>> {
  const username = typeof rawUsername === 'string' ? rawUsername.trim() : '';
  if (!username) return fail('username is required');
  const user = await findPersonByUsername(db, username);
  if (!user) return fail('user not found', 'user_not_found');
  if (Number(user.status) !== UserStatus.enabled) return fail('the user is disabled');
  return user;
}

export const isRefusal = (value: unknown): value is Envelope<never> =>
  typeof value === 'object' && value !== null && 'success' in value && (value as Envelope).success === false;
