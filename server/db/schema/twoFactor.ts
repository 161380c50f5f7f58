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

export interface TwoFactorSchema {
  two_factor: TwoFactorTable;
}
