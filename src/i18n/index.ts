// English and Chinese bundles (react-admin's strings plus ours) and the
// provider; the chosen language persists in localStorage under `locale`.
// English is in the main chunk; Chinese (./zh) loads when it is first needed.
import polyglotI18nProvider from 'ra-i18n-polyglot';
import englishMessages from 'ra-language-english';
import type { I18nProvider, TranslationMessages } from 'react-admin';
import { auditEnglish } from './audit.en';
import { appEnglish } from './app.en';
import { organizationsEnglish } from './organizations.en';
import { passkeyEnglish } from './passkey.en';
import { playgroundEnglish } from './playground.en';
import { pricingEnglish } from './pricing.en';
import { settingsEnglish } from './settings.en';
import { taskEnglish } from './task.en';
import { webhooksEnglish } from './webhooks.en';

export const LOCALE_STORAGE_KEY = 'locale';
export type Locale = 'en' | 'zh';

export const englishBundle = {
  ...englishMessages,
  ...appEnglish,
  ...settingsEnglish,
  ...webhooksEnglish,
  ...auditEnglish,
  ...pricingEnglish,
  ...playgroundEnglish,
  ...organizationsEnglish,
  ...passkeyEnglish,
  ...taskEnglish,
} as TranslationMessages;

const loaded: Partial<Record<Locale, TranslationMessages>> = { en: englishBundle };

const isLocale = (locale: string): locale is Locale => locale === 'en' || locale === 'zh';

/** A locale's messages: at once when loaded, else a promise of them. */
function messagesOf(locale: string): TranslationMessages | Promise<TranslationMessages> {
  const wanted = isLocale(locale) ? locale : 'en';
  return loaded[wanted] ?? import('./zh').then(({ chineseMessages }) => (loaded.zh = chineseMessages));
}

/** Loads the start locale's messages; the console renders after this. */
export async function prepareMessages(): Promise<void> {
  await messagesOf(initialLocale());
}

export function initialLocale(): Locale {
  const stored = typeof localStorage !== 'undefined' ? localStorage.getItem(LOCALE_STORAGE_KEY) : null;
  if (stored === 'en' || stored === 'zh') return stored;
  const browser = typeof navigator !== 'undefined' ? navigator.language : 'en';
  return browser.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

const LOCALES = [
  { locale: 'en', name: 'English' },
  { locale: 'zh', name: '中文' },
];

let provider: I18nProvider | undefined;
/** Made on first use, so it starts in the stored locale once prepareMessages has loaded it (English until then). */
function polyglot(): I18nProvider {
  if (!provider) {
    const start = initialLocale();
    provider = polyglotI18nProvider(messagesOf, loaded[start] ? start : 'en', LOCALES, { allowMissing: true });
  }
  return provider;
}

export const i18nProvider: I18nProvider = {
  translate: (key, options) => polyglot().translate(key, options),
  changeLocale: (locale, options) => polyglot().changeLocale(locale, options),
  getLocale: () => polyglot().getLocale(),
  getLocales: () => LOCALES,
};
