// Runtime settings (root only). Secrets are write-only: listed as set or not, never sent back.
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { OPTION_KEYS, OPTION_SPECS, isOptionKey, isSecretOption } from '../../../common/options';
import { Role } from '../../../common/roles';
import { requireRole } from '../../plugins/auth';
import { OptionError } from '../../plugins/optionStore';

export interface OptionListEntry {
  key: string;
  value: string;
  /** Only for secrets: whether one is stored. */
  set?: boolean;
}

export async function optionRoutes(app: FastifyInstance): Promise<void> {
  const { options } = app.ctx;
  const rootOnly = requireRole(Role.root);

  app.get('/api/option/', { preHandler: rootOnly }, async () => {
    const entries: OptionListEntry[] = OPTION_KEYS.map((key) =>
      isSecretOption(key) ? { key, value: '', set: options.get(key) !== '' } : { key, value: options.get(key) },
    );
    return ok(entries);
  });

  app.put('/api/option/', { preHandler: rootOnly }, async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const key = typeof body.key === 'string' ? body.key : '';
    if (!isOptionKey(key)) return fail(`unknown option: ${key || '(empty)'}`);
    const raw = body.value;
    if (raw !== undefined && raw !== null && typeof raw === 'object') return fail(`${key} must be a string`);
    const value = raw === undefined || raw === null ? '' : String(raw);
    if (OPTION_SPECS[key].kind === 'secret' && value === '') return ok(); // empty secret: keep the stored one

    if (value === 'true') {
      const prerequisite: Partial<Record<typeof key, [boolean, string]>> = {
        GitHubOAuthEnabled: [options.get('GitHubClientId') !== '', 'fill in the GitHub client id and secret first'],
        WeChatAuthEnabled: [options.get('WeChatServerAddress') !== '', 'fill in the WeChat server address and token first'],
        TurnstileCheckEnabled: [options.get('TurnstileSiteKey') !== '', 'fill in the Turnstile site key and secret first'],
        EmailDomainRestrictionEnabled: [options.get('EmailDomainWhitelist').trim() !== '', 'fill in the e-mail domain whitelist first'],
      };
      const rule = prerequisite[key];
      if (rule && !rule[0]) return fail(rule[1]);
    }
    if (key === 'PasswordLoginEnabled' && value === 'false' && !options.bool('GitHubOAuthEnabled') && !options.bool('WeChatAuthEnabled')) {
      return fail('password login is the last way to sign in: enable GitHub or WeChat login first');
    }
    try {
      await options.set(key, value);
    } catch (error) {
      if (error instanceof OptionError) return fail(error.message);
      throw error;
    }
    return ok();
  });
}
