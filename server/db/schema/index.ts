import type { AbilitiesSchema } from './abilities';
import type { AuditLogSchema } from './auditLog';
import type { ChannelsSchema } from './channels';
import type { FilesSchema } from './files';
import type { JobLeasesSchema } from './jobLeases';
import type { TasksSchema } from './tasks';
import type { BatchLinesSchema } from './batchLines';
import type { ResponseCacheSchema } from './responseCache';
import type { LogsSchema } from './logs';
import type { OidcIdentitiesSchema } from './oidcIdentities';
import type { OptionsSchema } from './options';
import type { OrganizationMembersSchema } from './organizationMembers';
import type { OrganizationsSchema } from './organizations';
import type { PasskeyChallengesSchema } from './passkeyChallenges';
import type { PasskeysSchema } from './passkeys';
import type { PruneRunsSchema } from './pruneRuns';
import type { RedemptionsSchema } from './redemptions';
import type { SessionsSchema } from './sessions';
import type { ReservationsSchema } from './reservations';
import type { TokensSchema } from './tokens';
import type { TwoFactorSchema } from './twoFactor';
import type { TwoFactorRecoveryCodesSchema } from './twoFactorRecoveryCodes';
import type { UsageRollupsSchema } from './usageRollups';
import type { UsersSchema } from './users';
import type { VerificationCodesSchema } from './verificationCodes';
import type { WebhooksSchema } from './webhooks';

/** The whole database, as Kysely sees it. */
export type Database = UsersSchema &
  AuditLogSchema &
  TokensSchema &
  ChannelsSchema &
  AbilitiesSchema &
  RedemptionsSchema &
  LogsSchema &
  OidcIdentitiesSchema &
  OptionsSchema &
  VerificationCodesSchema &
  SessionsSchema &
  ReservationsSchema &
  UsageRollupsSchema &
  JobLeasesSchema &
  PruneRunsSchema &
  WebhooksSchema &
  TwoFactorSchema &
  TwoFactorRecoveryCodesSchema &
  PasskeysSchema &
  PasskeyChallengesSchema &
  OrganizationsSchema &
  OrganizationMembersSchema &
  FilesSchema &
  TasksSchema &
  BatchLinesSchema &
  ResponseCacheSchema;
