import type { Generated } from 'kysely';

/** A console session; the cookie carries its id, the table only the id's SHA-256. */
export interface SessionsTable {
  id_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
  revoked: number;
  /** 1 while the session waits for its second factor (two-factor sign-in); such a session may call nothing else. */
  partial: Generated<number>;
}

export interface SessionsSchema {
  sessions: SessionsTable;
}
