// Public endpoints the console reads before anyone signs in.
import type { FastifyInstance } from 'fastify';
import { ok } from '../../../common/envelope';
import type { ClientStatus } from '../../../common/options';
import { VERSION } from '../../../common/version';

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
    register_enabled: options.bool('RegisterEnabled') && options.bool('PasswordRegisterEnabled'),
  };
}

export async function miscRoutes(app: FastifyInstance): Promise<void> {
  const { options } = app.ctx;
  app.get('/api/status', async () => ok(clientStatus(app)));
  app.get('/api/notice', async () => ok(options.get('Notice')));
  app.get('/api/about', async () => ok(options.get('About')));
  app.get('/api/home_page_content', async () => ok(options.get('HomePageContent')));
}
