// Sign-up, sign-in, sign-out and the caller's own account.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { effectiveTimeZone } from '../../../common/budgets';
import { fail, ok } from '../../../common/envelope';
import { LogType, Role, UserStatus } from '../../../common/roles';
import { DISPLAY_NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX, USERNAME_PATTERN } from '../../../common/validation';
import { callerOf, requireRole } from '../../plugins/auth';
import type { AppContext } from '../../plugins/context';
import { clearSessionCookie, revokeSession, revokeUserSessions, SESSION_COOKIE, setSessionCookie } from '../../services/session';
import { deleteFilesOf } from '../../services/fileStore';
import { appFileStore } from '../../services/s3FileStore';
import { rateLimit } from '../../plugins/rateLimit';
import { loginLimits } from '../../services/rateLimiter';
import { SSO_REQUIRED, ssoOnly } from '../../services/oidc';
import { requireTurnstile } from '../../plugins/turnstile';
import { insertLog } from '../../repositories/logs';
import { checkEmailCode, normaliseEmail } from './account';
import { finishFirstFactor } from './twoFactor';
import {
  addUserQuota,
  createUser,
  deleteUser,
  emailTaken,
  findUserByAffCode,
  findUserByUsername,
  toUserRecord,
  updateUser,
  type UserPatch,
  type UserRow,
} from '../../repositories/users';
import { loginSchema, registerSchema, selfUpdateSchema } from './inputSchemas';
import { hashPassword, verifyPassword } from '../../passwords';

const asString = (value: unknown) => (typeof value === 'string' ? value : '');

export function usernameProblem(username: string): string | undefined {
  if (!username) return 'username is required';
  if (username.length > USERNAME_MAX) return `username must be at most ${USERNAME_MAX} characters`;
  if (!USERNAME_PATTERN.test(username)) return 'username may contain only letters, digits, "_", "-" and "."';
  return undefined;
}

export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN) return 'password length must not be less than 8';
  if (password.length > PASSWORD_MAX) return `password length must not be more than ${PASSWORD_MAX}`;
  return undefined;
}

/** Creates the new account with its gifts (the new user's, the invitee's) and the inviter's, in one transaction. */
async function createRegisteredUser(
  { db, dialect, options }: AppContext,
  { username, passwordHash, email, inviter }: { username: string; passwordHash: string; email: string; inviter: UserRow | undefined },
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    const newUserQuota = options.number('QuotaForNewUser');
    const inviteeBonus = inviter ? options.number('QuotaForInvitee') : 0;
    const inviterBonus = inviter ? options.number('QuotaForInviter') : 0;
    const id = await createUser(transaction, dialect, {
      username,
      passwordHash,
      email,
      quota: newUserQuota + inviteeBonus,
      inviterId: inviter ? Number(inviter.id) : 0,
    });
    if (newUserQuota > 0) {
      await insertLog(transaction, {
        userId: id,
        username,
        type: LogType.system,
        content: `new-user gift: ${newUserQuota} quota`,
        quota: newUserQuota,
      });
    }
    if (inviter && inviteeBonus > 0) {
      await insertLog(transaction, {
        userId: id,
        username,
        type: LogType.system,
        content: `gift for using an invite code: ${inviteeBonus} quota`,
        quota: inviteeBonus,
      });
    }
    if (inviter && inviterBonus > 0) {
      await addUserQuota(transaction, Number(inviter.id), inviterBonus);
      await insertLog(transaction, {
        userId: Number(inviter.id),
        username: inviter.username,
        type: LogType.system,
        content: `gift for inviting ${username}: ${inviterBonus} quota`,
        quota: inviterBonus,
      });
    }
  });
}

export function userRoutes(fastify: FastifyInstance): Promise<void> {
  signUpRoutes(fastify);
  signInRoutes(fastify);
  selfRoutes(fastify);
  return Promise.resolve();
}

/** Sign-up with a password (and, when asked for, a verified e-mail address and an invite code). */
function signUpRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;

  app.post('/api/user/register', { preHandler: [rateLimit('critical'), requireTurnstile], schema: registerSchema }, async (request) => {
    if (!options.bool('RegisterEnabled')) return fail('registration is closed', 'registration_closed');
    if (ssoOnly(options)) return fail(SSO_REQUIRED, 'sso_required');
    if (!options.bool('PasswordRegisterEnabled')) return fail('password registration is closed, please use a third-party login');
    const body = request.body;
    const username = asString(body.username).trim();
    const password = asString(body.password);
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) return fail(problem);
    if (body.password2 !== undefined && asString(body.password2) !== password)
      return fail('the two passwords entered do not match', 'passwords_mismatch');
    if (await findUserByUsername(db, username)) return fail('username already taken', 'username_taken');
    let email = '';
    if (options.bool('EmailVerificationEnabled')) {
      const verified = normaliseEmail(body.email);
      if (!verified || !body.verification_code) return fail('an e-mail address and its verification code are required');
      const codeProblem = await checkEmailCode(fastify, request.ip, verified, String(body.verification_code).trim());
      if (codeProblem) return fail(codeProblem);
      if (await emailTaken(db, verified)) {
        return fail('this e-mail address is already bound to another account');
      }
      email = verified;
    }
    const affCode = asString(body.aff_code).trim();
    const inviter = affCode ? await findUserByAffCode(db, affCode) : undefined;
    const passwordHash = await hashPassword(password, app.ctx.config.passwordHashCost);
    try {
      await createRegisteredUser(app.ctx, { username, passwordHash, email, inviter });
    } catch (error) {
      // two registrations racing for one name: the unique index decides
      if (await findUserByUsername(db, username)) return fail('username already taken', 'username_taken');
      throw error;
    }
    return ok();
  });
}

/** Sign-in with a password, and sign-out. */
function signInRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options, sessions } = app.ctx;

  // limited by failed attempts per (IP, account) and per IP, not by rateLimit('critical'):
  // an attacker's wrong guesses must not lock everyone behind the same address out
  app.post('/api/user/login', { schema: loginSchema }, async (request, reply) => {
    if (!options.bool('PasswordLoginEnabled')) return fail('password login is disabled', 'password_login_disabled');
    const body = request.body;
    const username = asString(body.username).trim();
    request.audit({ username });
    const password = asString(body.password);
    if (!username || !password) return fail('username and password are required', 'credentials_required');
    const limits = loginLimits(app.ctx, request.ip, username);
    if (await limits.blocked()) return reply.code(429).send(fail('too many failed sign-ins, please try again later', 'too_many_sign_ins'));
    const user = await findUserByUsername(db, username);
    // an account without a password ('' : signed up through OAuth) matches nothing
    const matches = await verifyPassword(password, user?.password_hash, app.ctx.config.passwordHashCost);
    // the account tried is the target; the actor is named once the sign-in goes through (finishFirstFactor)
    request.audit({ targetId: user ? Number(user.id) : '' });
    // under OidcOnly only root's right password passes; every other attempt gets the same answer, naming no account
    if (ssoOnly(options) && !(user && matches && Number(user.role) >= Role.root)) {
      if (!matches) await limits.failed();
      return fail(SSO_REQUIRED, 'sso_required');
    }
    if (!user || !matches) {
      await limits.failed();
      return fail('username or password is wrong', 'wrong_credentials');
    }
    if (Number(user.status) !== UserStatus.enabled) return fail('user is banned', 'user_banned');
    return finishFirstFactor(request, reply, user);
  });

  app.get('/api/user/logout', async (request, reply) => {
    const claims = sessions.decode(request.cookies[SESSION_COOKIE]);
    // this browser's session ends on the server too, so a copied cookie is worthless afterwards
    if (claims) await revokeSession(db, claims.sid);
    clearSessionCookie(request, reply);
    return ok();
  });
}

/** The caller's own account: read, edit, delete. */
function selfRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, sessions } = app.ctx;
  const signedIn = requireRole(Role.user);

  // the caller's own budget comes with its spend this period, in the operator's time zone
  app.get('/api/user/self', { preHandler: signedIn }, (request) =>
    ok(toUserRecord(callerOf(request), effectiveTimeZone(app.ctx.options.get('TimeZone')))),
  );

  app.put('/api/user/self', { preHandler: signedIn, schema: selfUpdateSchema }, async (request, reply) => {
    const caller = callerOf(request);
    const body = request.body;
    const patch: UserPatch = {};
    const username = asString(body.username).trim();
    if (username && username !== caller.username) {
      const problem = usernameProblem(username);
      if (problem) return fail(problem);
      if (await findUserByUsername(db, username)) return fail('username already taken', 'username_taken');
      patch.username = username;
    }
    if (typeof body.display_name === 'string') {
      const displayName = body.display_name.trim();
      if (displayName.length > DISPLAY_NAME_MAX) return fail(`display name must be at most ${DISPLAY_NAME_MAX} characters`);
      patch.display_name = displayName || (patch.username ?? caller.username);
    }
    const password = asString(body.password);
    if (password) {
      const problem = passwordProblem(password);
      if (problem) return fail(problem);
      // whoever holds a session (or an access token) must also know the password to replace it
      if (caller.password_hash) {
        const current = asString(body.original_password);
        if (!current) return fail('enter your current password to set a new one');
        if (!(await verifyPassword(current, caller.password_hash))) return fail('the current password is wrong', 'wrong_current_password');
      }
      patch.password_hash = await hashPassword(password, app.ctx.config.passwordHashCost);
      // a new password signs out every other session; this one gets a fresh cookie
      patch.session_version = Number(caller.session_version) + 1;
    }
    await updateUser(db, Number(caller.id), patch);
    request.audit({ before: caller, after: { ...caller, ...patch } });
    if (patch.session_version !== undefined) {
      await revokeUserSessions(db, Number(caller.id));
      await setSessionCookie(db, request, reply, sessions, { id: Number(caller.id), session_version: patch.session_version });
    }
    return ok();
  });

  app.delete('/api/user/self', { preHandler: signedIn }, async (request, reply) => {
    const caller = callerOf(request);
    if (Number(caller.role) >= Role.root) return fail('cannot delete the super admin', 'root_protected');
    await deleteUser(db, Number(caller.id));
    await deleteFilesOf(db, appFileStore(app.ctx.config, db, app.log), Number(caller.id));
    await revokeUserSessions(db, Number(caller.id));
    clearSessionCookie(request, reply);
    return ok();
  });
}
