// Both message bundles, for tests that compare or read them (the console itself loads Chinese on demand).
import type { TranslationMessages } from 'react-admin';
import { englishBundle, type Locale } from '../../src/i18n';
import { chineseMessages } from '../../src/i18n/zh';

export const messages: Record<Locale, TranslationMessages> = { en: englishBundle, zh: chineseMessages };
