// English and Chinese bundles (react-admin's strings plus ours) and the
// provider; the chosen language persists in localStorage under `locale`.
import polyglotI18nProvider from 'ra-i18n-polyglot';
import englishMessages from 'ra-language-english';
import type { TranslationMessages } from 'react-admin';
import { appEnglish } from './app.en';
import { appChinese } from './app.zh';
import { raChinese } from './ra.zh';
import { settingsEnglish } from './settings.en';
import { settingsChinese } from './settings.zh';
import { webhooksEnglish } from './webhooks.en';
import { webhooksChinese } from './webhooks.zh';

export const LOCALE_STORAGE_KEY = 'locale';
export type Locale = 'en' | 'zh';

export const messages: Record<Locale, TranslationMessages> = {
  en: { ...englishMessages, ...appEnglish, ...settingsEnglish, ...webhooksEnglish } as TranslationMessages,
  zh: { ...raChinese, ...appChinese, ...settingsChinese, ...webhooksChinese } as TranslationMessages,
};

export function initialLocale(): Locale {
  const stored = typeof localStorage !== 'undefined' ? localStorage.getItem(LOCALE_STORAGE_KEY) : null;
  if (stored === 'en' || stored === 'zh') return stored;
  const browser = typeof navigator !== 'undefined' ? navigator.language : 'en';
  return browser.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export const i18nProvider = polyglotI18nProvider(
  (locale) => messages[(locale as Locale) in messages ? (locale as Locale) : 'en'],
  initialLocale(),
  [
    { locale: 'en', name: 'English' },
    { locale: 'zh', name: '中文' },
  ],
  { allowMissing: true },
);
