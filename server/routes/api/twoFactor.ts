// Two-factor sign-in with TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps,
// one step of drift either way) and ten one-time recovery codes.
//
// Enrolment: POST enrol makes a secret and shows it once (as text and as a QR
// code); nothing changes for sign-in until POST confirm proves the
// authenticator has it, which also hands out the recovery codes, once. Sign-in:
// a right password for an account with two-factor sign-in gives a partial
// session (see services/session.ts) and `two_factor_required`; POST
// /api/user/login/2fa with a code replaces it by a full one. A code is spent
// when accepted: a TOTP code's time step, or the recovery code itself.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TOTP } from 'otpauth';
import { fail, ok, type Envelope } from '../../../common/envelope';
import type { SecondFactorChoice, SessionUser, TwoFactorEnrolment, TwoFactorStatus } from '../../../common/records';
import { LogType, Role, UserStatus } from '../../../common/roles';
import type { AppContext } from '../../plugins/context';
import { callerOf, mustEnrolTwoFactor, requireRole, secondFactorRequiredFor } from '../../plugins/auth';
import { DEFAULT_LOGIN_LIMITS } from '../../config';
import { rateLimit } from '../../plugins/rateLimit';
import { failureLimit } from '../../services/rateLimiter';
import { revokeSession, revokeUserSessions, SESSION_COOKIE, sessionStage, setSessionCookie } from '../../services/session';
import { insertLog } from '../../repositories/logs';
import {
  acceptTimeStep,
  enableTwoFactor,
  findTwoFactor,
  removeTwoFactor,
  startEnrolment,
  unusedRecoveryCodes,
  useRecoveryCode,
} from '../../repositories/twoFactor';
import { findUserById, type UserRow } from '../../repositories/users';
import { deletePasskeysOfUser, hasPasskey, listPasskeys } from '../../repositories/passkeys';
import { byId, twoFactorCodeSchema } from './inputSchemas';
import { deriveKey, openSecret, sealSecret } from '../../secrets';
import { randomInt } from 'node:crypto';

const PERIOD_SECONDS = 30;
/** Codes of the step before and after the current one are accepted too (clock drift, slow typing). */
const WINDOW_STEPS = 1;
const RECOVERY_CODE_COUNT = 10;
// no 0/o, 1/l/i: recovery codes are read off paper
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

function newRecoveryCode(): string {
  let code = '';
  for (let index = 0; index < 10; index += 1) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** otpauth and qrcode, loaded at the first two-factor step: a gateway most of whose calls are relayed never needs them (a few MiB of heap). */
let otpauth: Promise<typeof import('otpauth')> | undefined;
const loadOtpauth = () => (otpauth ??= import('otpauth'));

async function totpOf(secretBase32: string, issuer: string, label: string): Promise<TOTP> {
  const { Secret, TOTP } = await loadOtpauth();
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

export const toSessionUser = (user: UserRow): SessionUser => ({
  id: Number(user.id),
  username: user.username,
  display_name: user.display_name,
  role: Number(user.role),
  status: Number(user.status),
});

/**
 * The answer to a right password (or a finished OAuth sign-in): a partial
 * session and `two_factor_required` when the account has a second factor
 * (TOTP or a passkey), else a full session and the user. When a passkey can
 * finish the step, `data.second_factors` says which factors the account has.
 */
export async function finishFirstFactor(
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
): Promise<Envelope<SessionUser> | Envelope<SecondFactorChoice>> {
  const { db, sessions } = request.server.ctx;
  // every way of signing in ends here: the audit row names who signed in (its outcome says whether fully)
  request.audit({ targetId: Number(user.id), actor: user });
  const totp = (await findTwoFactor(db, Number(user.id)))?.enabled === 1;
  const passkey = await hasPasskey(db, Number(user.id));
  if (totp || passkey) {
    await setSessionCookie(db, request, reply, sessions, user, 'partial');
    if (!passkey) {
      return fail('enter the code from your authenticator app (or a recovery code) to finish signing in', 'two_factor_required');
    }
    const choice: SecondFactorChoice = { second_factors: totp ? ['totp', 'passkey'] : ['passkey'] };
    return {
      ...fail('use your passkey (or a code from your authenticator app) to finish signing in', 'two_factor_required'),
      data: choice,
    };
  }
  await setSessionCookie(db, request, reply, sessions, user);
  const sessionUser = toSessionUser(user);
  if (await mustEnrolTwoFactor(request, user)) sessionUser.two_factor_enrolment_required = true;
  return ok(sessionUser);
}

/** The issuer an authenticator app shows beside the code. */
function issuerOf(options: AppContext['options']): string {
  return options.get('SystemName') || 'Switchboard';
}

/** The key that seals the TOTP secrets at rest. */
function sealingKeyOf(ctx: AppContext): Buffer {
  return deriveKey(ctx.config.sessionSecret, 'two-factor');
}

/** Wrong codes one account may take per window, from anywhere: the password is already known to whoever guesses. */
function guessLimit(ctx: AppContext, userId: number) {
  return failureLimit(ctx, `two-factor:${userId}`, (ctx.config.loginLimits ?? DEFAULT_LOGIN_LIMITS).perAccount);
}

/**
 * Checks and spends a code: a TOTP code of the (pending or enabled) secret,
 * or, when `recovery`, an unused recovery code.
 */
async function spendCode(
  { db, options }: AppContext,
  sealingKey: Buffer,
  userId: number,
  code: string,
  accept: { pending?: boolean; recovery?: boolean },
): Promise<'totp' | 'recovery' | undefined> {
  const enrolment = await findTwoFactor(db, userId);
  const wantEnabled = accept.pending ? 0 : 1;
  if (!enrolment || enrolment.enabled !== wantEnabled) return undefined;
  const token = code.replace(/\s+/g, '');
  if (/^\d{6}$/.test(token)) {
    const secret = openSecret(enrolment.secret_sealed, sealingKey);
    if (!secret) return undefined;
    const now = Date.now();
    const delta = (await totpOf(secret, issuerOf(options), '')).validate({ token, timestamp: now, window: WINDOW_STEPS });
    if (delta === null) return undefined;
    const step = Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
    return (await acceptTimeStep(db, userId, step, wantEnabled)) ? 'totp' : undefined;
  }
  if (accept.recovery && (await useRecoveryCode(db, userId, token))) return 'recovery';
  return undefined;
}

/** Runs a code check under the per-account guess limit; undefined when the code was right. */
async function checkCode(
  ctx: AppContext,
  sealingKey: Buffer,
  reply: FastifyReply,
  userId: number,
  code: string,
  accept: { pending?: boolean; recovery?: boolean },
): Promise<{ refusal: Envelope<never> } | { used: 'totp' | 'recovery' }> {
  const limit = guessLimit(ctx, userId);
  if (await limit.blocked()) {
    reply.code(429);
    return { refusal: fail('too many wrong codes, please try again later', 'too_many_sign_ins') };
  }
  const used = await spendCode(ctx, sealingKey, userId, code, accept);
  if (!used) {
    await limit.failed();
    return { refusal: fail('the code is wrong or was already used', 'wrong_two_factor_code') };
  }
  return { used };
}

/** A user's two-factor state, as the console shows it. */
async function statusOf({ db, options }: AppContext, user: UserRow): Promise<TwoFactorStatus> {
  const enrolment = await findTwoFactor(db, Number(user.id));
  return {
    enabled: enrolment?.enabled === 1,
    pending: enrolment?.enabled === 0,
    recovery_codes_left: enrolment?.enabled === 1 ? await unusedRecoveryCodes(db, Number(user.id)) : 0,
    // TOTP is needed while a second factor is required and no passkey stands in for it
    required: secondFactorRequiredFor(options, user) && !(await hasPasskey(db, Number(user.id))),
  };
}

export function twoFactorRoutes(fastify: FastifyInstance): Promise<void> {
  enrolmentRoutes(fastify);
  secondStepRoutes(fastify);
  rootResetRoutes(fastify);
  return Promise.resolve();
}

/** A user's own two-factor sign-in: its state, enrolment, confirmation and removal. */
function enrolmentRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options, sessions } = app.ctx;
  const sealingKey = sealingKeyOf(app.ctx);
  const enrolling = requireRole(Role.user, { openDuringEnrolment: true });
  const signedIn = requireRole(Role.user);

  app.get('/api/user/2fa', { preHandler: enrolling }, async (request) => ok(await statusOf(app.ctx, callerOf(request))));

  app.post('/api/user/2fa/enrol', { preHandler: enrolling }, async (request) => {
    const caller = callerOf(request);
    const { Secret } = await loadOtpauth();
    const secret = new Secret({ size: 20 }).base32;
    if (!(await startEnrolment(db, Number(caller.id), sealSecret(secret, sealingKey)))) {
      return fail('two-factor sign-in is already on: disable it first to enrol again');
    }
    const url = (await totpOf(secret, issuerOf(options), caller.username)).toString();
    const { default: QRCode } = await import('qrcode');
    const svg = await QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    const enrolment: TwoFactorEnrolment = {
      secret,
      otpauth_url: url,
      qr_code: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    };
    return ok(enrolment);
  });

  app.post(
    '/api/user/2fa/confirm',
    { preHandler: [rateLimit('critical'), enrolling], schema: twoFactorCodeSchema },
    async (request, reply) => {
      const caller = callerOf(request);
      const enrolment = await findTwoFactor(db, Number(caller.id));
      if (enrolment?.enabled !== 0) return fail(enrolment ? 'two-factor sign-in is already on' : 'start the enrolment first');
      const checked = await checkCode(app.ctx, sealingKey, reply, Number(caller.id), request.body.code, { pending: true });
      if ('refusal' in checked) return checked.refusal;
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await enableTwoFactor(db, Number(caller.id), codes);
      // whoever else is signed in as this user signed in with the password alone
      const claims = sessions.decode(request.cookies[SESSION_COOKIE]);
      await revokeUserSessions(db, Number(caller.id), claims?.sid);
      await insertLog(db, {
        userId: Number(caller.id),
        username: caller.username,
        type: LogType.system,
        content: 'two-factor sign-in enabled',
      });
      return ok({ recovery_codes: codes });
    },
  );

  app.post(
    '/api/user/2fa/disable',
    { preHandler: [rateLimit('critical'), signedIn], schema: twoFactorCodeSchema },
    async (request, reply) => {
      const caller = callerOf(request);
      if ((await findTwoFactor(db, Number(caller.id)))?.enabled !== 1) return fail('two-factor sign-in is not on');
      // a passkey still counts as the second factor the requirement asks for
      if (secondFactorRequiredFor(options, caller) && !(await hasPasskey(db, Number(caller.id)))) {
        return fail('a second factor is required for your account: add a passkey before turning this off', 'two_factor_enrolment_required');
      }
      const checked = await checkCode(app.ctx, sealingKey, reply, Number(caller.id), request.body.code, { recovery: true });
      if ('refusal' in checked) return checked.refusal;
      await removeTwoFactor(db, Number(caller.id));
      await insertLog(db, {
        userId: Number(caller.id),
        username: caller.username,
        type: LogType.system,
        content: 'two-factor sign-in disabled',
      });
      return ok();
    },
  );
}

/** The second step of sign-in, which turns a partial session into a full one. */
function secondStepRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, sessions } = app.ctx;
  const sealingKey = sealingKeyOf(app.ctx);

  // the second step of sign-in: the only route a partial session opens
  app.post('/api/user/login/2fa', { preHandler: rateLimit('critical'), schema: twoFactorCodeSchema }, async (request, reply) => {
    const claims = sessions.decode(request.cookies[SESSION_COOKIE]);
    const user = claims ? await findUserById(db, claims.uid) : undefined;
    const partial = claims && user && Number(user.session_version) === claims.ver && (await sessionStage(db, claims)) === 'partial';
    if (!claims || !user || !partial) {
      return reply.code(401).send(fail('sign in with your password first (the code step lasts 5 minutes)', 'session_expired'));
    }
    request.audit({ targetId: Number(user.id), actor: user });
    if (Number(user.status) !== UserStatus.enabled) return fail('user is banned', 'user_banned');
    const checked = await checkCode(app.ctx, sealingKey, reply, Number(user.id), request.body.code, { recovery: true });
    if ('refusal' in checked) return checked.refusal;
    // a fresh session id for the full session: the partial cookie is worth nothing afterwards
    await revokeSession(db, claims.sid);
    await setSessionCookie(db, request, reply, sessions, user);
    const sessionUser = toSessionUser(user);
    if (checked.used === 'recovery') {
      return ok({ ...sessionUser, recovery_codes_left: await unusedRecoveryCodes(db, Number(user.id)) });
    }
    return ok(sessionUser);
  });
}

/** Root's view of a user's two-factor sign-in, and its reset. */
function rootResetRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const root = requireRole(Role.root);

  app.get('/api/user/:id/2fa', { preHandler: root, schema: byId }, async (request) => {
    const target = await findUserById(db, Number(request.params.id));
    if (!target) return fail('user not found', 'user_not_found');
    const status = await statusOf(app.ctx, target);
    const passkeys = (await listPasskeys(db, Number(target.id))).length;
    return ok({ enabled: status.enabled, recovery_codes_left: status.recovery_codes_left, passkeys });
  });

  // for a user who lost both their authenticator and their recovery codes (or their passkeys): every second factor
  // goes, and they sign in with the password alone after it (or set one up again, when one is required)
  app.post('/api/user/:id/2fa/reset', { preHandler: root, schema: byId }, async (request) => {
    const target = await findUserById(db, Number(request.params.id));
    if (!target) return fail('user not found', 'user_not_found');
    const removedTotp = await removeTwoFactor(db, Number(target.id));
    const removed = (await deletePasskeysOfUser(db, Number(target.id))) > 0 || removedTotp;
    if (removed) {
      await insertLog(db, {
        userId: Number(target.id),
        username: target.username,
        type: LogType.system,
        content: `two-factor sign-in reset by ${callerOf(request).username}`,
      });
    }
    return ok({ removed });
  });
}
