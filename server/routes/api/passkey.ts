// Passkeys: a console account's WebAuthn credentials (services/passkeys.ts
// runs the ceremonies).
//
// Own passkeys, under /api/user/passkey: list, register (options, then the
// browser's answer with a name), remove. They stay open to an account that
// must still set up a second factor, since a passkey is one.
//
// Sign-in, under /api/passkey/login (options, then the browser's answer):
// without a session, a passkey alone signs in (a discoverable credential with
// user verification counts as both factors); with a half-signed-in session (the
// password was right, a second factor is due) it is that second factor, and
// only the account's own passkeys are accepted. Either way the result is a new,
// full session, as after POST /api/user/login/2fa.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type TUnsafe } from 'typebox';
import { fail, ok, type Envelope } from '../../../common/envelope';
import type { PasskeyRecord } from '../../../common/records';
import { isRoot, LogType, Role, UserStatus } from '../../../common/roles';
import { callerOf, hasSecondFactor, requireRole, secondFactorRequiredFor } from '../../plugins/auth';
import { rateLimit } from '../../plugins/rateLimit';
import { insertLog } from '../../repositories/logs';
import { deletePasskey, listPasskeys, type PasskeyRow } from '../../repositories/passkeys';
import { hasTwoFactor } from '../../repositories/twoFactor';
import { findUserById, type UserRow } from '../../repositories/users';
import {
  authenticate,
  authenticationOptions,
  registerPasskey,
  registrationOptions,
  relyingPartyOf,
  type RelyingParty,
} from '../../services/passkeys';
import { SSO_REQUIRED, ssoOnly } from '../../services/oidc';
import type { OptionStore } from '../../services/optionStore';
import { revokeSession, revokeUserSessions, SESSION_COOKIE, sessionStage, setSessionCookie } from '../../services/session';
import { byId, text } from './inputSchemas';
import { toSessionUser } from './twoFactor';

const NAME_MAX = 64;

/** A credential as @simplewebauthn/browser hands it over; the library checks the inside. */
const credential = {
  type: 'object',
  required: ['id', 'rawId', 'type', 'response'],
  properties: {
    id: text(2048),
    rawId: text(2048),
    type: text(32),
    response: { type: 'object', maxProperties: 16, description: 'the authenticator response' },
    clientExtensionResults: { type: 'object', maxProperties: 16, description: 'the extension results' },
    authenticatorAttachment: { type: ['string', 'null'], maxLength: 32, description: 'the attachment' },
  },
  maxProperties: 16,
  description: 'a WebAuthn credential',
};

const typed = <T>(schema: Record<string, unknown>): TUnsafe<T> => Type.Unsafe<T>(schema);

const registerSchema = {
  body: typed<{ name: string; credential: RegistrationResponseJSON }>({
    type: 'object',
    required: ['name', 'credential'],
    properties: { name: text(NAME_MAX), credential },
    description: 'a JSON object',
  }),
};
const signInSchema = {
  body: typed<{ credential: AuthenticationResponseJSON }>({
    type: 'object',
    required: ['credential'],
    properties: { credential },
    description: 'a JSON object',
  }),
};

const toRecord = (row: PasskeyRow): PasskeyRecord => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  backed_up: row.backed_up === 1,
});

/** The relying party for this request, or the refusal saying why passkeys cannot be used from here. */
function relyingPartyFor(request: FastifyRequest): RelyingParty | Envelope<never> {
  const { options } = request.server.ctx;
  const party = relyingPartyOf({
    serverAddress: options.get('ServerAddress').trim(),
    protocol: request.protocol,
    host: request.host,
    hostname: request.hostname,
    systemName: options.get('SystemName'),
  });
  return 'problem' in party ? fail(party.problem) : party;
}

export function passkeyRoutes(fastify: FastifyInstance): Promise<void> {
  ownPasskeyRoutes(fastify);
  signInRoutes(fastify);
  return Promise.resolve();
}

/** The caller's own passkeys: list, register, remove. */
function ownPasskeyRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options, sessions } = app.ctx;
  const enrolling = requireRole(Role.user, { openDuringEnrolment: true });
  const signedIn = requireRole(Role.user);

  app.get('/api/user/passkey', { preHandler: enrolling }, async (request) =>
    ok((await listPasskeys(db, Number(callerOf(request).id))).map(toRecord)),
  );

  app.post('/api/user/passkey/register/options', { preHandler: [rateLimit('critical'), enrolling] }, async (request) => {
    const party = relyingPartyFor(request);
    if ('success' in party) return party;
    return ok(await registrationOptions(db, party, toSessionUser(callerOf(request))));
  });

  app.post(
    '/api/user/passkey/register/verify',
    { preHandler: [rateLimit('critical'), enrolling], schema: registerSchema },
    async (request) => {
      const caller = callerOf(request);
      const name = request.body.name.trim();
      if (!name) return fail('give the passkey a name');
      const party = relyingPartyFor(request);
      if ('success' in party) return party;
      const hadSecondFactor = await hasSecondFactor(db, Number(caller.id));
      const outcome = await registerPasskey(db, party, Number(caller.id), request.body.credential, name);
      if ('problem' in outcome) return fail(outcome.problem);
      // as when TOTP is turned on: whoever else is signed in as this user signed in with the password alone
      if (!hadSecondFactor) await revokeUserSessions(db, Number(caller.id), sessions.decode(request.cookies[SESSION_COOKIE])?.sid);
      await insertLog(db, {
        userId: Number(caller.id),
        username: caller.username,
        type: LogType.system,
        content: `passkey added: ${name}`,
      });
      return ok((await listPasskeys(db, Number(caller.id))).map(toRecord));
    },
  );

  app.delete('/api/user/passkey/:id', { preHandler: signedIn, schema: byId }, async (request) => {
    const caller = callerOf(request);
    const userId = Number(caller.id);
    const passkeys = await listPasskeys(db, userId);
    const target = passkeys.find((passkey) => passkey.id === Number(request.params.id));
    request.audit({ targetType: 'passkey', targetId: Number(request.params.id), before: target && { name: target.name } });
    if (!target) return fail('passkey not found', 'not_found');
    const last = passkeys.length === 1 && !(await hasTwoFactor(db, userId));
    if (last && secondFactorRequiredFor(options, caller)) {
      return fail(
        'a second factor is required for your account: set up another one before removing this passkey',
        'two_factor_enrolment_required',
      );
    }
    if (!(await deletePasskey(db, userId, target.id))) return fail('passkey not found', 'not_found');
    await insertLog(db, { userId, username: caller.username, type: LogType.system, content: `passkey removed: ${target.name}` });
    return ok();
  });
}

/** The user of a half-signed-in session (password right, second factor due), with the session's id. */
async function partialSession(request: FastifyRequest): Promise<{ user: UserRow; sid: string } | undefined> {
  const { db, sessions } = request.server.ctx;
  const claims = sessions.decode(request.cookies[SESSION_COOKIE]);
  const user = claims ? await findUserById(db, claims.uid) : undefined;
  if (!claims || !user || Number(user.session_version) !== claims.ver) return undefined;
  return (await sessionStage(db, claims)) === 'partial' ? { user, sid: claims.sid } : undefined;
}

/**
 * Why this account may not sign in with a passkey, if it may not: the same
 * rules as at the password form. Every rule that limits how an account signs
 * in belongs here too, so a passkey never gets round it: under single sign-on
 * only (OidcOnly), every account but root is refused here as at the form.
 */
function signInRefusal(user: UserRow, options: Pick<OptionStore, 'bool'>): Envelope<never> | undefined {
  if (Number(user.status) !== UserStatus.enabled) return fail('user is banned', 'user_banned');
  if (ssoOnly(options) && !isRoot(Number(user.role))) return fail(SSO_REQUIRED, 'sso_required');
  return undefined;
}

const refused = () => fail('this passkey was not accepted: it may have been removed, or the request expired', 'passkey_refused');

/** A passkey whose counter went back: two copies of one key exist. Noted in the account's log and the server's. */
async function noteClone(request: FastifyRequest, passkey: PasskeyRow, counter: number): Promise<void> {
  const { db } = request.server.ctx;
  const owner = await findUserById(db, passkey.user_id);
  const content = `passkey "${passkey.name}" refused: its signature counter went back (${counter} after ${passkey.counter}), a sign of a copied key`;
  request.log.warn({ userId: passkey.user_id, passkeyId: passkey.id }, content);
  await insertLog(db, { userId: passkey.user_id, username: owner?.username ?? '', type: LogType.system, content });
}

/** Sign-in with a passkey: alone, or as the second step after a password. */
function signInRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, sessions } = app.ctx;

  app.post('/api/passkey/login/options', { preHandler: rateLimit('critical') }, async (request) => {
    const party = relyingPartyFor(request);
    if ('success' in party) return party;
    const partial = await partialSession(request);
    const options = await authenticationOptions(db, party, partial ? Number(partial.user.id) : 0);
    if (!options) return fail('this account has no passkey: use the code from your authenticator app', 'passkey_refused');
    return ok(options);
  });

  app.post('/api/passkey/login/verify', { preHandler: rateLimit('critical'), schema: signInSchema }, async (request, reply) => {
    const party = relyingPartyFor(request);
    if ('success' in party) return party;
    const partial = await partialSession(request);
    const outcome = await authenticate(db, party, partial ? Number(partial.user.id) : 0, request.body.credential);
    if ('problem' in outcome) {
      if (outcome.problem === 'cloned') await noteClone(request, outcome.passkey, outcome.counter);
      return refused();
    }
    const user = partial?.user ?? (await findUserById(db, outcome.passkey.user_id));
    if (!user) return refused();
    // the audit row names who signed in, as for every other way in (twoFactor.ts finishFirstFactor)
    request.audit({ targetId: Number(user.id), actor: user });
    const refusal = signInRefusal(user, request.server.ctx.options);
    if (refusal) return refusal;
    // a fresh session id for the full session: a partial cookie is worth nothing afterwards
    if (partial) await revokeSession(db, partial.sid);
    await setSessionCookie(db, request, reply, sessions, user);
    return ok(toSessionUser(user));
  });
}
