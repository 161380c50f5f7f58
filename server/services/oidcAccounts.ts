// The account a verified OpenID Connect identity signs in to: the one linked
// to its issuer and subject; else, when OidcLinkByEmail is on, the account
// with its verified e-mail address (never root's: whoever runs the provider
// must not be able to take the super admin over); else a new account, its
// role from OidcRoleMapping applied to the groups claim. At every sign-in the
// account joins, as a member, the organisations OidcOrganizationMapping names
// for its groups (existing ones only; it never leaves one the mapping no longer names).
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { MessageCode } from '../../common/messageCodes';
import { parseOidcOrganizationMapping, parseOidcRoleMapping } from '../../common/options';
import { LogType, Role, UserStatus } from '../../common/roles';
import { DISPLAY_NAME_MAX, USERNAME_MAX } from '../../common/validation';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { insertLog } from '../repositories/logs';
import { deleteOidcLink, findOidcLink, insertOidcLink } from '../repositories/oidcIdentities';
import { addMember, membershipOf, organizationIdByName } from '../repositories/organizations';
import { createUser, emailTaken, findUserByEmail, findUserById, findUserByUsername, type UserRow } from '../repositories/users';
import type { VerifiedClaims } from './oidc';
import type { OptionStore } from './optionStore';

/** What the account rules read of the person: named by the claim options. */
export interface OidcPerson {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  displayName: string;
  usernameHint: string;
  groups: string[];
}

interface Services {
  db: Kysely<Database>;
  dialect: DatabaseConfig['dialect'];
  options: Pick<OptionStore, 'get' | 'bool' | 'number'>;
}

export type AccountOutcome = { user: UserRow; created: boolean } | { error: string; code?: MessageCode };

const IDENTIFIER_MAX = 255;

/** A claim by name; a dotted name reads into nested objects (Keycloak's realm_access.roles). */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (!name) return undefined;
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const textOf = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** The person as the claim options name them. */
export function personOf({ issuer, claims }: VerifiedClaims, options: Pick<OptionStore, 'get'>): OidcPerson {
  const email = textOf(claimAt(claims, options.get('OidcEmailClaim').trim())).toLowerCase();
  const groups = claimAt(claims, options.get('OidcGroupsClaim').trim());
  const verified = claims.email_verified;
  return {
    issuer,
    subject: textOf(claims.sub),
    email,
    // some providers (Amazon Cognito) send the flag as a string
    emailVerified: email !== '' && (verified === true || verified === 'true'),
    displayName: textOf(claimAt(claims, options.get('OidcNameClaim').trim())),
    usernameHint: textOf(claims.preferred_username) || email.split('@')[0] || '',
    groups: (Array.isArray(groups) ? groups : [groups]).filter((group): group is string => typeof group === 'string'),
  };
}

/** The highest role the person's groups map to; a common user when none does. */
export function roleOf(groups: readonly string[], mappingJson: string): number {
  const mapping = parseOidcRoleMapping(mappingJson) ?? {};
  // parseOidcRoleMapping admits users and admins only; the cap says so again, for root's sake
  const mapped = groups.map((group) => mapping[group] ?? Role.user);
  return Math.min(Math.max(Role.user, ...mapped), Role.admin);
}

/** A free username from the hint: its allowed characters, shortened, with a random suffix when taken. */
async function freeUsername(db: Kysely<Database>, hint: string): Promise<string> {
  const base = hint.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, USERNAME_MAX) || 'sso';
  if (!(await findUserByUsername(db, base))) return base;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const candidate = `${base.slice(0, USERNAME_MAX - 5)}_${randomInt(10_000).toString().padStart(4, '0')}`;
    if (!(await findUserByUsername(db, candidate))) return candidate;
  }
  return `sso_${randomInt(100_000_000).toString().padStart(8, '0')}`;
}

/** A new account for the person, linked to its identity in the same transaction. */
async function provision({ db, dialect, options }: Services, person: OidcPerson): Promise<UserRow> {
  const username = await freeUsername(db, person.usernameHint);
  const quota = options.number('QuotaForNewUser');
  // only an address the provider verified, and that no account holds, is kept (it opens password resets)
  const email = person.emailVerified && !(await emailTaken(db, person.email)) ? person.email : '';
  const id = await db.transaction().execute(async (transaction) => {
    const userId = await createUser(transaction, dialect, {
      username,
      displayName: person.displayName.slice(0, DISPLAY_NAME_MAX) || username,
      // no password: password sign-in matches nothing against ''
      passwordHash: '',
      role: roleOf(person.groups, options.get('OidcRoleMapping')),
      quota,
      email,
    });
    await insertOidcLink(transaction, { issuer: person.issuer, subject: person.subject, userId });
    if (quota > 0)
      await insertLog(transaction, { userId, username, type: LogType.system, content: `new-user gift: ${quota} quota`, quota });
    return userId;
  });
  return (await findUserById(db, id))!;
}

/** The linked account, or undefined; a link whose account was deleted is dropped. */
async function linkedUser(db: Kysely<Database>, person: OidcPerson): Promise<UserRow | undefined> {
  const userId = await findOidcLink(db, person.issuer, person.subject);
  if (userId === undefined) return undefined;
  const user = await findUserById(db, userId);
  if (!user) await deleteOidcLink(db, person.issuer, person.subject);
  return user;
}

/**
 * Joins the account to the organisations the mapping names for its groups, as a member; one it already belongs
 * to keeps its role there. A name no organisation has is skipped: the mapping never creates an organisation.
 */
export async function joinMappedOrganizations(db: Kysely<Database>, userId: number, groups: readonly string[], mappingJson: string) {
  const mapping = parseOidcOrganizationMapping(mappingJson) ?? {};
  const names = new Set(groups.flatMap((group) => (Object.hasOwn(mapping, group) ? [mapping[group]] : [])));
  const joined: number[] = [];
  for (const name of names) {
    const organizationId = await organizationIdByName(db, name);
    if (organizationId === undefined || (await membershipOf(db, organizationId, userId)) !== undefined) continue;
    try {
      await addMember(db, organizationId, userId, 'member');
      joined.push(organizationId);
    } catch {
      // the same sign-in twice at once: the pair's primary key let the other one in
    }
  }
  return joined;
}

/** The account this identity signs in to, linked or created on the way, in the organisations its groups map to. */
export async function accountFor(services: Services, person: OidcPerson): Promise<AccountOutcome> {
  const outcome = await findOrCreateAccount(services, person);
  if ('user' in outcome && Number(outcome.user.status) === UserStatus.enabled)
    await joinMappedOrganizations(services.db, Number(outcome.user.id), person.groups, services.options.get('OidcOrganizationMapping'));
  return outcome;
}

/** The account this identity signs in to, linked or created on the way; refusals say why. */
async function findOrCreateAccount(services: Services, person: OidcPerson): Promise<AccountOutcome> {
  const { db, options } = services;
  if (!person.subject || !person.issuer) return { error: 'the provider named no subject' };
  if (person.subject.length > IDENTIFIER_MAX || person.issuer.length > IDENTIFIER_MAX)
    return { error: 'the provider sent an issuer or subject longer than 255 characters' };
  const linked = await linkedUser(db, person);
  if (linked) return { user: linked, created: false };
  if (options.bool('OidcLinkByEmail') && person.emailVerified) {
    const holder = await findUserByEmail(db, person.email);
    if (holder && Number(holder.role) >= Role.root)
      return { error: "the super admin's account cannot be linked by e-mail; sign in with its password" };
    if (holder) {
      await insertOidcLink(db, { issuer: person.issuer, subject: person.subject, userId: Number(holder.id) });
      return { user: holder, created: false };
    }
  }
  if (!options.bool('RegisterEnabled')) return { error: 'registration is closed', code: 'registration_closed' };
  try {
    return { user: await provision(services, person), created: true };
  } catch (error) {
    // the same first sign-in twice at once: the identity's primary key let one through; that one is the account
    const raced = await linkedUser(db, person);
    if (raced) return { user: raced, created: false };
    throw error;
  }
}
