// The admin settings tabs as data (Operation, Prices, System, Other): which sections each tab
// has, which option keys each section holds, and how a few fields are drawn.
// The kind of every key (toggle, text, number, json, list, secret) and who may
// write it come from common/options.ts.
import type { OptionKey } from '../../common/options';

export type SettingTab = 'operation' | 'prices' | 'system' | 'other';

export interface SettingSection {
  /** Also the i18n key: settings.section.<tab>_<id>. */
  id: string;
  keys: OptionKey[];
}

export const SETTING_TABS: Record<SettingTab, SettingSection[]> = {
  operation: [
    {
      id: 'general',
      keys: [
        'TopUpLink',
        'ChatLink',
        'QuotaPerUnit',
        'RetryTimes',
        'LogConsumeEnabled',
        'TimeZone',
        'DisplayInCurrencyEnabled',
        'DisplayTokenStatEnabled',
        'PublicPricingEnabled',
        'ApproximateTokenEnabled',
        'AutomaticDisableChannelEnabled',
      ],
    },
    { id: 'monitoring', keys: ['ChannelDisableThreshold', 'ChannelTypeTestThresholds', 'QuotaRemindThreshold', 'TraceLinkTemplate'] },
    // drawn by RetentionSection.tsx: each key beside its kind's rows, size and last prune
    { id: 'retention', keys: ['LogRetentionDays', 'ErrorLogRetentionDays', 'AuditRetentionDays'] },
    { id: 'quota', keys: ['QuotaForNewUser', 'QuotaForInviter', 'QuotaForInvitee', 'PreConsumedQuota'] },
    {
      id: 'fairness',
      keys: [
        'TokenConcurrencyLimit',
        'UserConcurrencyLimit',
        'GroupRateLimits',
        'FileSizeLimitMB',
        'FileStorageQuotaMB',
        'FileUploadRateLimit',
        'TaskTimeoutMinutes',
        'BatchDiscount',
        'BatchChannelDiscounts',
        'BatchConcurrency',
        'BatchPauseInFlight',
        'BatchBusyLinesPerSecond',
        'BatchUpstreamEnabled',
      ],
    },
    {
      id: 'routing',
      keys: [
        'RetryableStatusCodes',
        'ChannelCooldownSeconds',
        'ChannelCooldownMaxSeconds',
        'CircuitBreakerFailures',
        'CircuitBreakerWindowSeconds',
        'CircuitBreakerOpenSeconds',
        'ModelFallbacks',
        'RoutingAffinitySeconds',
        'RoutingAffinityHeader',
        'RealtimeIdleSeconds',
        'RealtimeMaxSeconds',
        'ToolRefusalGroups',
      ],
    },
    {
      id: 'cache',
      keys: [
        'ResponseCacheEnabled',
        'ResponseCacheGroups',
        'ResponseCacheModels',
        'ResponseCacheTokens',
        'ResponseCacheScope',
        'ResponseCacheTtlSeconds',
        'ResponseCacheMaxTemperature',
        'ResponseCacheHitRatio',
        'ResponseCacheMaxEntryKB',
        'ResponseCacheMaxTotalMB',
      ],
    },
  ],
  prices: [
    // the price table (PriceTable.tsx) leads this section; these fields fold under "Advanced"
    {
      id: 'ratio',
      keys: ['ModelRatio', 'CompletionRatio', 'CacheReadRatio', 'CacheWriteRatio', 'ModelMaxOutputTokens', 'GroupRatio', 'VideoPrices'],
    },
  ],
  system: [
    { id: 'general', keys: ['ServerAddress'] },
    {
      id: 'login',
      keys: [
        'PasswordLoginEnabled',
        'PasswordRegisterEnabled',
        'EmailVerificationEnabled',
        'GitHubOAuthEnabled',
        'WeChatAuthEnabled',
        'TurnstileCheckEnabled',
        'RegisterEnabled',
        'TwoFactorRequiredForAdmins',
        'SecondFactorRequired',
      ],
    },
    { id: 'email_domains', keys: ['EmailDomainRestrictionEnabled', 'EmailDomainWhitelist'] },
    { id: 'smtp', keys: ['SMTPServer', 'SMTPPort', 'SMTPAccount', 'SMTPFrom', 'SMTPToken'] },
    { id: 'github', keys: ['GitHubClientId', 'GitHubClientSecret'] },
    {
      id: 'oidc',
      keys: [
        'OidcEnabled',
        'OidcOnly',
        'OidcLinkByEmail',
        'OidcWellKnown',
        'OidcClientId',
        'OidcClientSecret',
        'OidcScopes',
        'OidcButtonText',
        'OidcAuthorizationEndpoint',
        'OidcTokenEndpoint',
        'OidcUserinfoEndpoint',
        'OidcEmailClaim',
        'OidcNameClaim',
        'OidcGroupsClaim',
        'OidcRoleMapping',
        'OidcOrganizationMapping',
      ],
    },
    { id: 'wechat', keys: ['WeChatServerAddress', 'WeChatServerToken', 'WeChatAccountQRCodeImageURL'] },
    { id: 'turnstile', keys: ['TurnstileSiteKey', 'TurnstileSecretKey'] },
  ],
  other: [
    { id: 'notice', keys: ['Notice'] },
    { id: 'branding', keys: ['SystemName', 'Logo', 'Footer'] },
    { id: 'content', keys: ['HomePageContent', 'About'] },
  ],
};

export interface FieldHint {
  /** Rows of a text area; absent means a one-line field. */
  rows?: number;
  /** Step of a number field (quota per unit takes 0.01); whole numbers otherwise. */
  step?: number;
  placeholder?: string;
  monospace?: boolean;
}

export const FIELD_HINTS: Partial<Record<OptionKey, FieldHint>> = {
  QuotaPerUnit: { step: 0.01 },
  ChannelDisableThreshold: { step: 0.1 },
  SMTPPort: { placeholder: '587' },
  ModelRatio: { rows: 12, monospace: true },
  CompletionRatio: { rows: 6, monospace: true },
  CacheReadRatio: { rows: 6, monospace: true },
  CacheWriteRatio: { rows: 6, monospace: true },
  ModelMaxOutputTokens: { rows: 8, monospace: true },
  GroupRatio: { rows: 6, monospace: true },
  VideoPrices: { rows: 6, monospace: true },
  GroupRateLimits: { rows: 6, monospace: true },
  ModelFallbacks: { rows: 4, monospace: true, placeholder: '{"default": {"gpt-4o": ["claude-sonnet-4-5"]}}' },
  RetryableStatusCodes: { placeholder: '408,429,500-599' },
  ChannelCooldownSeconds: { step: 0.1 },
  CircuitBreakerOpenSeconds: { step: 0.1 },
  ChannelTypeTestThresholds: { rows: 6, monospace: true },
  OidcWellKnown: { placeholder: 'https://sso.example.com/realms/main/.well-known/openid-configuration' },
  OidcRoleMapping: { rows: 3, monospace: true, placeholder: '{"gw-admins": 10}' },
  OidcOrganizationMapping: { rows: 3, monospace: true, placeholder: '{"team-ml": "Machine learning"}' },
  Notice: { rows: 5 },
  Footer: { rows: 3, monospace: true },
  HomePageContent: { rows: 8 },
  About: { rows: 8 },
};

/** A field's label: settings.option.<Key>, the key itself if missing. */
export function optionLabel(translate: (key: string, options?: Record<string, unknown>) => string, key: OptionKey): string {
  return translate(`settings.option.${key}`, { _: key });
}
