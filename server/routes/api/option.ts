// Runtime settings. Admins read them all and write most; the keys marked
// rootOnly in common/options.ts (the top-up link and the whole System tab:
// sign-in methods, mail, identity providers) need root, since an admin who
// could change them could take over root's account. Secrets are write-only:
// listed as set or not, never sent back.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { OPTION_KEYS, OPTION_SPECS, isOptionKey, isRootOnlyOption, isSecretOption, type OptionKey } from '../../../common/options';
import { Role, isRoot } from '../../../common/roles';
import { callerOf, hasSecondFactor, requireRole } from '../../plugins/auth';
import { escapeHtml, MailError } from '../../services/mailer';
import { OptionError, type OptionStore } from '../../services/optionStore';
import { rootSignInBindings } from '../../repositories/users';
import type { AppContext } from '../../plugins/context';
import { optionUpdateSchema } from './inputSchemas';

export interface OptionListEntry {
  key: string;
  value: string;
  /** Only for secrets: whether one is stored. */
  set?: boolean;
}

/** What must be filled in before a switch may be turned on. */
const PREREQUISITES: Partial<Record<OptionKey, { needs: OptionKey[]; message: string }>> = {
  GitHubOAuthEnabled: { needs: ['GitHubClientId', 'GitHubClientSecret'], message: 'fill in the GitHub client id and secret first' },
  WeChatAuthEnabled: { needs: ['WeChatServerAddress'], message: 'fill in the WeChat server address and token first' },
  OidcEnabled: { needs: ['OidcWellKnown', 'OidcClientId'], message: 'fill in the single sign-on discovery URL and client id first' },
  TurnstileCheckEnabled: { needs: ['TurnstileSiteKey', 'TurnstileSecretKey'], message: 'fill in the Turnstile site key and secret first' },
  EmailDomainRestrictionEnabled: { needs: ['EmailDomainWhitelist'], message: 'fill in the e-mail domain whitelist first' },
};

/** The switches of the ways to sign in, and how a refusal names them. */
const SIGN_IN_SWITCHES: Partial<Record<OptionKey, string>> = {
  PasswordLoginEnabled: 'password login',
  GitHubOAuthEnabled: 'GitHub login',
  WeChatAuthEnabled: 'WeChat login',
};

/**
 * Refuses to switch off the last way a super admin can sign in (and so the
 * only way back into these settings). GitHub and WeChat count only when a root
 * account has that identity bound; password login always counts.
 */
async function lockoutMessage(context: AppContext, key: OptionKey, value: string): Promise<string | undefined> {
  const name = SIGN_IN_SWITCHES[key];
  if (!name || value !== 'false') return undefined;
  const { options, db } = context;
  const stillOn = (switchKey: OptionKey) => switchKey !== key && options.bool(switchKey);
  if (stillOn('PasswordLoginEnabled')) return undefined;
  const bound = await rootSignInBindings(db);
  if ((stillOn('GitHubOAuthEnabled') && bound.github) || (stillOn('WeChatAuthEnabled') && bound.wechat)) return undefined;
  return `${name} is the last way the super admin can sign in: keep it on, or first enable password login, or GitHub or WeChat login with that account bound to root`;
}

/**
 * Refuses to require a second factor (of admins, or of everyone) while the
 * caller has none: root would shut itself out of everything but enrolment with
 * its next request.
 */
async function ownSecondFactorMissing(context: AppContext, key: OptionKey, value: string, callerId: number): Promise<string | undefined> {
  if ((key !== 'TwoFactorRequiredForAdmins' && key !== 'SecondFactorRequired') || value !== 'true') return undefined;
  if (await hasSecondFactor(context.db, callerId)) return undefined;
  return 'set up two-factor sign-in for your own account first (Setting → Personal)';
}

function unmetPrerequisite(options: OptionStore, key: OptionKey, value: string): string | undefined {
  const rule = PREREQUISITES[key];
  if (!rule || value !== 'true') return undefined;
  return rule.needs.every((needed) => options.get(needed).trim() !== '') ? undefined : rule.message;
}

export function optionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { options, sendMail } = app.ctx;
  const admin = requireRole(Role.admin);
  const rootOnly = requireRole(Role.root);

  app.get('/api/option/', { preHandler: admin }, () => {
    const entries: OptionListEntry[] = OPTION_KEYS.map((key) =>
      isSecretOption(key) ? { key, value: '', set: options.get(key) !== '' } : { key, value: options.get(key) },
    );
    return ok(entries);
  });

  app.put('/api/option/', { preHandler: admin, schema: optionUpdateSchema }, async (request) => {
    const body = request.body;
    const key = body.key ?? '';
    request.audit({ targetId: key });
    if (!isOptionKey(key)) return fail(`unknown option: ${key || '(empty)'}`);
    if (isRootOnlyOption(key) && !isRoot(callerOf(request).role)) {
      return fail('only the super admin may change this setting', 'root_only');
    }
    const raw = body.value;
    if (raw !== undefined && raw !== null && typeof raw === 'object') return fail(`${key} must be a string`);
    const value = raw === undefined || raw === null ? '' : String(raw);
    if (OPTION_SPECS[key].kind === 'secret' && value === '') return ok(); // empty secret: keep the stored one

    const refusal =
      (await ownSecondFactorMissing(app.ctx, key, value, Number(callerOf(request).id))) ??
      unmetPrerequisite(options, key, value) ??
      (await lockoutMessage(app.ctx, key, value));
    if (refusal) return fail(refusal);
    const before = options.get(key);
    try {
      await options.set(key, value);
    } catch (error) {
      if (error instanceof OptionError) return fail(error.message);
      throw error;
    }
    // the stored (normalised) value; a secret is masked by the audit log (its kind says so)
    request.audit({ before: { [key]: before }, after: { [key]: options.get(key) } });
    return ok();
  });

  // Beyond the spec: proves the saved SMTP settings work by mailing the caller.
  app.post('/api/option/test_email', { preHandler: rootOnly }, async (request) => {
    const caller = callerOf(request);
    if (!caller.email) return fail('your account has no e-mail address: bind one under Setting → Personal, the test e-mail goes there');
    if (!options.get('SMTPServer')) return fail('SMTP is not configured: fill in and save the SMTP server first');
    const systemName = options.get('SystemName');
    try {
      await sendMail({
        to: caller.email,
        subject: `${systemName}: test e-mail`,
        html: `<p>This is a test e-mail from ${escapeHtml(systemName)}. The SMTP settings work.</p>`,
      });
    } catch (error) {
      if (error instanceof MailError) return fail(error.message);
      throw error;
    }
    return ok(caller.email);
  });
  return Promise.resolve();
}
