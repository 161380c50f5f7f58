/** A console session; the cookie carries its id, the table only the id's SHA-256. */
export interface SessionsTable {
  id_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
  revoked: number;
}

export interface SessionsSchema {
  sessions: SessionsTable;
}
