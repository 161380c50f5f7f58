/** A WebAuthn challenge handed out and not yet used; deleted by its one use or once expired. */
export interface PasskeyChallengesTable {
  /** sha256 hex of the challenge (base64url) the browser signs. */
  challenge_hash: string;
  /** 'register' or 'login'. */
  purpose: string;
  /** The account it was handed to: the registering user, the user of a half-signed-in session, or 0 (a passkey-first sign-in). */
  user_id: number;
  /** Registration only: the WebAuthn user handle the options named (base64url), stored with the new passkey. */
  user_handle: string;
  expires_at: number;
}

export interface PasskeyChallengesSchema {
  passkey_challenges: PasskeyChallengesTable;
}
