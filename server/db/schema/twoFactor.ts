import type { Generated } from 'kysely';

/** An account's TOTP enrolment; `enabled` is 0 until a first code confirmed it. */
export interface TwoFactorTable {
  user_id: number;
  /** The base32 secret, sealed with AES-256-GCM (server/secrets.ts sealSecret). */
  secret_sealed: string;
  enabled: number;
  /** The last 30-second time step a code was accepted at; codes of that step or earlier are refused. */
  last_step: number;
  created_at: number;
  enabled_at: number;
}

/** One of an account's ten recovery codes: its SHA-256, and when it was used (0: not yet). */
export interface TwoFactorRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: number;
}

export interface TwoFactorSchema {
  two_factor: TwoFactorTable;
  two_factor_recovery_codes: TwoFactorRecoveryCodesTable;
}
