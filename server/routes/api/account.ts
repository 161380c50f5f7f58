// E-mail ownership codes, password reset by e-mailed link, and e-mail binding.
// Answers never reveal whether an address belongs to an account.
import { randomBytes, randomInt } from 'node:crypto';
import { hashPassword } from '../../passwords';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import { EMAIL_MAX } from '../../../common/validation';
import { callerOf, requireRole } from '../../plugins/auth';
import type { AppContext } from '../../plugins/context';
import { MailError } from '../../services/mailer';
import { rateLimit } from '../../plugins/rateLimit';
import { failureLimit } from '../../services/rateLimiter';
import { requireTurnstile } from '../../plugins/turnstile';
import { CODE_GUESSES_PER_REQUESTER, consumeCode, storeCode } from '../../repositories/verificationCodes';
import { emailTaken, findUserByEmail, findUserById, updateUser } from '../../repositories/users';
import { randomAlphanumeric } from '../../secrets';
import { emailBindSchema, emailQuerySchema, resetSchema } from './inputSchemas';

export const CODE_TTL_SECONDS = 10 * 60;

/**
 * Checks an e-mail code with the per-requester limit: CODE_GUESSES_PER_REQUESTER
 * wrong codes for one address from one IP while a code lives, then that IP
 * waits; the code itself stays good for its owner.
 */
export async function checkEmailCode(app: FastifyInstance, ip: string, email: string, code: string): Promise<string | undefined> {
  const limit = failureLimit(app.ctx, `code:${ip}:${email}`, { max: CODE_GUESSES_PER_REQUESTER, windowSeconds: CODE_TTL_SECONDS });
  if (await limit.blocked()) return 'too many wrong codes for this address, please wait and request a new code';
  if (await consumeCode(app.ctx.db, 'verify', email, code)) return undefined;
  await limit.failed();
  return 'the verification code is wrong or has expired';
}
export const RESET_TTL_SECONDS = 15 * 60;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(raw: unknown): string | undefined {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return email && email.length <= EMAIL_MAX && EMAIL_PATTERN.test(email) ? email : undefined;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** Whether the address's domain may register, when the domain restriction is on. */
function domainAllowed(options: AppContext['options'], email: string): boolean {
  if (!options.bool('EmailDomainRestrictionEnabled')) return true;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return options
    .get('EmailDomainWhitelist')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .includes(domain);
}

/** The address links in e-mails point at, without a trailing slash. */
function serverAddress({ options, config }: AppContext): string {
  return (options.get('ServerAddress') || `http://localhost:${config.port}`).replace(/\/+$/, '');
}

/** A mailer's refusal as the envelope's failure; anything else is rethrown. */
function mailFailure(error: unknown) {
  if (error instanceof MailError) return fail(error.message);
  throw error;
}

export function accountRoutes(fastify: FastifyInstance): Promise<void> {
  codeMailRoutes(fastify);
  codeUseRoutes(fastify);
  return Promise.resolve();
}

/** The routes that e-mail a code: an address's verification code, a password reset link. */
function codeMailRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options, sendMail } = app.ctx;

  app.get('/api/verification', { preHandler: [rateLimit('critical'), requireTurnstile], schema: emailQuerySchema }, async (request) => {
    const email = normaliseEmail(request.query.email);
    if (!email) return fail('please enter a valid e-mail address', 'invalid_email');
    if (!domainAllowed(options, email)) return fail('this e-mail domain is not accepted here');
    const systemName = escapeHtml(options.get('SystemName'));
    try {
      if (await emailTaken(db, email)) {
        // no code for an address in use, and no telling the requester so
        await sendMail({
          to: email,
          subject: `${options.get('SystemName')}: e-mail already registered`,
          html: `<p>Someone asked for a ${systemName} verification code for this address, which already belongs to an account. If it was you, sign in or reset your password instead.</p>`,
        });
      } else {
        const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
        await storeCode(db, 'verify', email, code, CODE_TTL_SECONDS);
        await sendMail({
          to: email,
          subject: `${options.get('SystemName')} e-mail verification`,
          html: `<p>Your ${systemName} verification code is <strong>${code}</strong>.</p><p>It is valid for 10 minutes and can be used once.</p>`,
        });
      }
    } catch (error) {
      return mailFailure(error);
    }
    return ok();
  });

  app.get('/api/reset_password', { preHandler: [rateLimit('critical'), requireTurnstile], schema: emailQuerySchema }, async (request) => {
    const email = normaliseEmail(request.query.email);
    if (!email) return fail('please enter a valid e-mail address', 'invalid_email');
    if (await emailTaken(db, email)) {
      // 256 random bits: no number of guesses finds it, so wrong ones need not burn it
      const token = randomBytes(32).toString('hex');
      await storeCode(db, 'reset', email, token, RESET_TTL_SECONDS);
      const link = `${serverAddress(app.ctx)}/user/reset?email=${encodeURIComponent(email)}&token=${token}`;
      try {
        await sendMail({
          to: email,
          subject: `${options.get('SystemName')} password reset`,
          html: `<p>Open this link to reset your password:</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>It is valid for 15 minutes and can be used once. If you did not ask for it, ignore this e-mail.</p>`,
        });
      } catch (error) {
        return mailFailure(error);
      }
    }
    return ok();
  });
}

/** The routes that use one: the reset itself, and binding a verified address. */
function codeUseRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, config } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.post('/api/user/reset', { preHandler: rateLimit('critical'), schema: resetSchema }, async (request) => {
    const body = request.body;
    const email = normaliseEmail(body.email);
    const token = body.token?.trim() ?? '';
    if (!email || !token) return fail('the reset link is incomplete');
    if (!(await consumeCode(db, 'reset', email, token))) return fail('the reset link is invalid or has expired');
    const user = await findUserByEmail(db, email);
    if (!user) return fail('the reset link is invalid or has expired');
    const password = randomAlphanumeric(12);
    await updateUser(db, Number(user.id), {
      password_hash: await hashPassword(password, config.passwordHashCost),
      // a reset signs out every session of the account
      session_version: Number(user.session_version) + 1,
    });
    return ok(password);
  });

  app.get('/api/oauth/email/bind', { preHandler: [rateLimit('critical'), signedIn], schema: emailBindSchema }, async (request) => {
    const query = request.query;
    const email = normaliseEmail(query.email);
    if (!email) return fail('please enter a valid e-mail address', 'invalid_email');
    const caller = callerOf(request);
    const codeProblem = await checkEmailCode(fastify, request.ip, email, (query.code ?? '').trim());
    if (codeProblem) return fail(codeProblem);
    if (await emailTaken(db, email, Number(caller.id))) return fail('this e-mail address is already bound to another account');
    await updateUser(db, Number(caller.id), { email });
    const updated = await findUserById(db, Number(caller.id));
    return ok({ email: updated?.email ?? email });
  });
}
