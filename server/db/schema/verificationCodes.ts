import type { Generated } from 'kysely';

export interface VerificationCodesTable {
  id: Generated<number>;
  /** 'verify' (e-mail ownership) or 'reset' (password reset). */
  purpose: string;
  /** The e-mail address the code was sent to. */
  target: string;
  /** sha256 hex of the code. */
  code_hash: string;
  attempts: number;
  expires_at: number;
  created_at: number;
}

export interface VerificationCodesSchema {
  verification_codes: VerificationCodesTable;
}
