// Which option keys each admin settings tab holds (spec §2 screen 4).
import type { OptionKey } from '../../common/options';

export type SettingSection = 'operation' | 'system' | 'other';

export const SETTING_SECTIONS: Record<SettingSection, OptionKey[]> = {
  operation: [
    'TopUpLink', 'ChatLink', 'QuotaPerUnit', 'RetryTimes', 'LogConsumeEnabled', 'DisplayInCurrencyEnabled', 'DisplayTokenStatEnabled',
    'ApproximateTokenEnabled', 'AutomaticDisableChannelEnabled', 'ChannelDisableThreshold', 'QuotaRemindThreshold', 'QuotaForNewUser',
    'QuotaForInviter', 'QuotaForInvitee', 'PreConsumedQuota', 'ModelRatio', 'GroupRatio',
  ],
  system: [
    'ServerAddress', 'PasswordLoginEnabled', 'PasswordRegisterEnabled', 'EmailVerificationEnabled', 'GitHubOAuthEnabled', 'WeChatAuthEnabled',
    'TurnstileCheckEnabled', 'RegisterEnabled', 'EmailDomainRestrictionEnabled', 'EmailDomainWhitelist', 'SMTPServer', 'SMTPPort',
    'SMTPAccount', 'SMTPFrom', 'SMTPToken', 'GitHubClientId', 'GitHubClientSecret', 'WeChatServerAddress', 'WeChatServerToken',
    'WeChatAccountQRCodeImageURL', 'TurnstileSiteKey', 'TurnstileSecretKey',
  ],
  other: ['Notice', 'SystemName', 'Logo', 'HomePageContent', 'About', 'Footer'],
};
