import type { Generated } from 'kysely';

/** A passkey (WebAuthn credential) of a console account. */
export interface PasskeysTable {
  id: Generated<number>;
  user_id: number;
  /** sha256 hex of the credential id: the unique key it is found by. */
  credential_hash: string;
  /** The credential id, base64url, as the browser names it. */
  credential_id: string;
  /** The WebAuthn user handle given at registration (base64url); the same for every passkey of one account. */
  user_handle: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The authenticator's signature counter at the last accepted use (0 for authenticators that keep none). */
  counter: number;
  /** The transports the browser reported, comma-joined. */
  transports: string;
  name: string;
  /** 1 when the authenticator said the credential is synced (a multi-device passkey). */
  backed_up: number;
  created_at: number;
  /** Unix seconds of the last sign-in with it; 0 = never. */
  last_used_at: number;
}

export interface PasskeysSchema {
  passkeys: PasskeysTable;
}
