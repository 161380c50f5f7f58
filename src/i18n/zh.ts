// The Chinese bundle: loaded on demand, so an English visitor never downloads it
// (main.tsx waits for it before the first render when Chinese is the start locale).
import type { TranslationMessages } from 'react-admin';
import { appChinese } from './app.zh';
import { playgroundChinese } from './playground.zh';
import { pricingChinese } from './pricing.zh';
import { raChinese } from './ra.zh';
import { settingsChinese } from './settings.zh';
import { webhooksChinese } from './webhooks.zh';

export const chineseMessages = {
  ...raChinese,
  ...appChinese,
  ...settingsChinese,
  ...webhooksChinese,
  ...pricingChinese,
  ...playgroundChinese,
} as TranslationMessages;
