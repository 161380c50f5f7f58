// The dashboard's strings (src/i18n/dashboard.{en,zh}.ts) travel with the
// dashboard's own chunk rather than the console's main bundle, so the login
// page does not download them (tests/e2e/firstLoad.e2e.ts holds its size).
// `dashboard.*` keys are looked up here, in the language react-admin shows;
// any other key goes to react-admin's translate (error messages, common words).
import { useMemo } from 'react';
import { useLocale, useTranslate } from 'react-admin';
import { dashboardEnglish } from '../i18n/dashboard.en';
import { dashboardChinese } from '../i18n/dashboard.zh';

export const DASHBOARD_MESSAGES = { en: dashboardEnglish, zh: dashboardChinese } as const;

type Options = Record<string, unknown> & { _?: string };
export type DashboardTranslate = (key: string, options?: Options) => string;

function lookup(bundle: unknown, key: string): string | undefined {
  const found = key
    .split('.')
    .reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), bundle);
  return typeof found === 'string' ? found : undefined;
}

/** Polyglot's `%{name}` interpolation, which the bundles use. */
export function interpolate(text: string, options: Options = {}): string {
  return text.replace(/%\{(\w+)\}/g, (whole, name: string) => (name in options ? String(options[name]) : whole));
}

export function useDashboardTranslate(): DashboardTranslate {
  const locale = useLocale();
  const translate = useTranslate();
  return useMemo(() => {
    const bundle = DASHBOARD_MESSAGES[locale === 'zh' ? 'zh' : 'en'];
    return (key, options) => {
      if (!key.startsWith('dashboard.')) return translate(key, options);
      const text = lookup(bundle, key) ?? lookup(DASHBOARD_MESSAGES.en, key);
      return text === undefined ? (options?._ ?? key) : interpolate(text, options);
    };
  }, [locale, translate]);
}
