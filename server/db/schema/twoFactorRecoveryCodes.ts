import type { Generated } from 'kysely';

/** One of an account's ten recovery codes: its SHA-256, and when it was used (0: not yet). */
export interface TwoFactorRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: number;
}

export interface TwoFactorRecoveryCodesSchema {
  two_factor_recovery_codes: TwoFactorRecoveryCodesTable;
}
