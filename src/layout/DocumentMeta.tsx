// What the browser tab and assistive technology read about the page: the
// title ("Tokens · <system name>") per route, and <html lang> following the
// chosen locale so screen readers pronounce Chinese as Chinese.
import { useEffect } from 'react';
import { useLocaleState, useTranslate } from 'react-admin';
import { matchPath, useLocation } from 'react-router-dom';
import { systemNameOf, useStatus } from './status';

/** The route patterns and their title keys; the first match wins. */
export const PAGE_TITLES: Array<[pattern: string, key: string]> = [
  ['/', 'app.page_title.home'],
  ['/login', 'app.page_title.login'],
  ['/register', 'app.page_title.register'],
  ['/reset', 'app.page_title.reset'],
  ['/user/reset', 'app.page_title.reset'],
  ['/channel', 'app.page_title.channel'],
  ['/channel/add', 'app.page_title.channel_add'],
  ['/channel/edit/:id', 'app.page_title.channel_edit'],
  ['/token', 'app.page_title.token'],
  ['/token/add', 'app.page_title.token_add'],
  ['/token/edit/:id', 'app.page_title.token_edit'],
  ['/redemption', 'app.page_title.redemption'],
  ['/redemption/add', 'app.page_title.redemption_add'],
  ['/redemption/edit/:id', 'app.page_title.redemption_edit'],
  ['/user', 'app.page_title.user'],
  ['/user/add', 'app.page_title.user_add'],
  ['/user/edit', 'app.page_title.user_self_edit'],
  ['/user/edit/:id', 'app.page_title.user_edit'],
  ['/log', 'app.page_title.log'],
  ['/audit', 'audit.title'],
  ['/setting', 'app.page_title.setting'],
  ['/topup', 'app.page_title.topup'],
  ['/pricing', 'pricing.title'],
  ['/playground', 'playground.title'],
  ['/about', 'app.page_title.about'],
  ['/chat', 'app.page_title.chat'],
  // react-admin's own routes for the simple-rest resources (create before :id, which would match it)
  ['/webhook', 'webhooks.title'],
  ['/webhook/create', 'webhooks.create_title'],
  ['/webhook/:id', 'webhooks.edit_title'],
  ['/webhook_delivery', 'webhooks.deliveries.title'],
];

export function pageTitleKey(pathname: string): string | null {
  return PAGE_TITLES.find(([pattern]) => matchPath(pattern, pathname))?.[1] ?? null;
}

/** `zh` is shown as Simplified Chinese. */
export function htmlLang(locale: string): string {
  return locale === 'zh' ? 'zh-CN' : 'en';
}

export function DocumentMeta() {
  const translate = useTranslate();
  const [locale] = useLocaleState();
  const { pathname } = useLocation();
  const { status } = useStatus();
  const systemName = systemNameOf(status);
  const key = pageTitleKey(pathname);
  const page = key ? translate(key) : translate('app.page_title.not_found');
  useEffect(() => {
    document.title = `${page} · ${systemName}`;
  }, [page, systemName]);
  useEffect(() => {
    document.documentElement.lang = htmlLang(locale);
  }, [locale]);
  return null;
}
