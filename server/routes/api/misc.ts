// Public endpoints the console reads before anyone signs in, and the admins'
// update check.
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import type { ClientStatus } from '../../../common/options';
import { Role } from '../../../common/roles';
import { VERSION, type ReleaseInfo } from '../../../common/version';
import { DEFAULT_RELEASE_CHECK_URL } from '../../config';
import { requireRole } from '../../plugins/auth';
import { ssoOnly } from '../../services/oidc';

/** How long the update check waits for the release server before giving up. */
export const RELEASE_CHECK_TIMEOUT_MS = 5000;

function versionParts(version: string): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return match ? match.slice(1, 4).map(Number) : undefined;
}

/** Whether `tag` names a later release than `current`; tags that are not x.y.z count as newer when they differ. */
export function isNewerVersion(tag: string, current: string): boolean {
  const [next, now] = [versionParts(tag), versionParts(current)];
  if (!next || !now) return tag.trim() !== current.trim();
  for (let index = 0; index < 3; index += 1) {
    if (next[index] !== now[index]) return next[index] > now[index];
  }
  return false;
}

class ReleaseCheckError extends Error {}

function unreachableMessage(error: unknown): string {
  const failure = error as Error & { cause?: { code?: string; message?: string } };
  if (failure?.name === 'TimeoutError' || failure?.name === 'AbortError') {
    return `cannot check for updates: the release server did not answer within ${RELEASE_CHECK_TIMEOUT_MS / 1000} s (no network?)`;
  }
  const reason = failure?.cause?.code ?? failure?.cause?.message ?? failure?.message ?? String(error);
  return `cannot check for updates: the release server is unreachable (${reason})`;
}

/** Reads the latest release from a GitHub-style "latest release" endpoint; fails fast and clearly. */
async function fetchLatestRelease(url: string): Promise<ReleaseInfo> {
  let release: Partial<Record<keyof ReleaseInfo, unknown>>;
  try {
    const response = await fetch(url, {
      headers: { Accept: 'application/vnd.github+json', 'User-Agent': `Switchboard/${VERSION}` },
      signal: AbortSignal.timeout(RELEASE_CHECK_TIMEOUT_MS),
    });
    if (!response.ok) throw new ReleaseCheckError(`cannot check for updates: the release server answered HTTP ${response.status}`);
    release = (await response.json().catch(() => ({}))) as typeof release;
  } catch (error) {
    throw error instanceof ReleaseCheckError ? error : new ReleaseCheckError(unreachableMessage(error));
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const tag = text(release.tag_name);
  if (!tag) throw new ReleaseCheckError('cannot check for updates: the release server sent no release tag');
  const page = text(release.html_url);
  return {
    current_version: VERSION,
    tag_name: tag,
    name: text(release.name) || tag,
    body: text(release.body),
    html_url: /^https?:\/\//.test(page) ? page : '',
    published_at: text(release.published_at),
    update_available: isNewerVersion(tag, VERSION),
  };
}

export function clientStatus(app: FastifyInstance): ClientStatus {
  const { options, config, startTime } = app.ctx;
  return {
    version: VERSION,
    start_time: startTime,
    system_name: options.get('SystemName'),
    logo: options.get('Logo'),
    footer_html: options.get('Footer'),
    quota_per_unit: options.number('QuotaPerUnit'),
    display_in_currency: options.bool('DisplayInCurrencyEnabled'),
    chat_link: options.get('ChatLink'),
    server_address: options.get('ServerAddress') || `http://localhost:${config.port}`,
    top_up_link: options.get('TopUpLink'),
    wechat_login: options.bool('WeChatAuthEnabled'),
    wechat_qrcode: options.get('WeChatAccountQRCodeImageURL'),
    github_oauth: options.bool('GitHubOAuthEnabled'),
    github_client_id: options.get('GitHubClientId'),
    turnstile_check: options.bool('TurnstileCheckEnabled'),
    turnstile_site_key: options.get('TurnstileSiteKey'),
    email_verification: options.bool('EmailVerificationEnabled'),
    password_login: options.bool('PasswordLoginEnabled'),
    register_enabled: options.bool('RegisterEnabled') && options.bool('PasswordRegisterEnabled') && !ssoOnly(options),
    public_pricing: options.bool('PublicPricingEnabled'),
    oidc: options.bool('OidcEnabled'),
    oidc_client_id: options.get('OidcClientId'),
    oidc_well_known: options.get('OidcWellKnown'),
    oidc_authorization_endpoint: options.get('OidcAuthorizationEndpoint'),
    oidc_token_endpoint: options.get('OidcTokenEndpoint'),
    oidc_userinfo_endpoint: options.get('OidcUserinfoEndpoint'),
    oidc_button_text: options.get('OidcButtonText'),
    oidc_only: ssoOnly(options),
  };
}

export function miscRoutes(app: FastifyInstance): Promise<void> {
  const { options } = app.ctx;
  app.get('/api/status', () => ok(clientStatus(app)));
  app.get('/api/notice', () => ok(options.get('Notice')));
  app.get('/api/about', () => ok(options.get('About')));
  app.get('/api/home_page_content', () => ok(options.get('HomePageContent')));

  // The release is fetched here rather than by the browser (as one-api did), so the URL is configurable
  // (RELEASE_CHECK_URL) and a missing network gives one clear message within the timeout.
  app.get('/api/release/latest', { preHandler: requireRole(Role.admin) }, async () => {
    try {
      return ok(await fetchLatestRelease(app.ctx.config.releaseCheckUrl ?? DEFAULT_RELEASE_CHECK_URL));
    } catch (error) {
      if (error instanceof ReleaseCheckError) return fail(error.message);
      throw error;
    }
  });
  return Promise.resolve();
}
