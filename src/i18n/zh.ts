// The Chinese bundle: loaded on demand, so an English visitor never downloads it
// (main.tsx waits for it before the first render when Chinese is the start locale).
import type { TranslationMessages } from 'react-admin';
import { auditChinese } from './audit.zh';
import { appChinese } from './app.zh';
import { organizationsChinese } from './organizations.zh';
import { passkeyChinese } from './passkey.zh';
import { playgroundChinese } from './playground.zh';
import { pricingChinese } from './pricing.zh';
import { raChinese } from './ra.zh';
import { settingsChinese } from './settings.zh';
import { taskChinese } from './task.zh';
import { webhooksChinese } from './webhooks.zh';

export const chineseMessages = {
  ...raChinese,
  ...appChinese,
  ...settingsChinese,
  ...webhooksChinese,
  ...auditChinese,
  ...pricingChinese,
  ...playgroundChinese,
  ...organizationsChinese,
  ...passkeyChinese,
  ...taskChinese,
} as TranslationMessages;
