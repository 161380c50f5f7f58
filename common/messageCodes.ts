/**
 * Stable codes on the console API's refusals (`Envelope.code`). The message
 * stays English for one-api clients; the console translates by code, so a
 * reworded message never breaks a translation. Add a code here, on the
 * server's `fail(message, code)` and in both console bundles
 * (`app.server_message.<code>`), in one change.
 */
export const MESSAGE_CODES = [
  // signing in and sessions
  'not_logged_in',
  'session_expired',
  'wrong_credentials',
  'credentials_required',
  'user_banned',
  'password_login_disabled',
  'too_many_sign_ins',
  'two_factor_required',
  'two_factor_enrolment_required',
  'sso_required',
  'wrong_two_factor_code',
  'passkey_refused',
  // registration and account validation
  'registration_closed',
  'passwords_mismatch',
  'username_taken',
  'invalid_email',
  'wrong_current_password',
  'code_required',
  // permission refusals
  'permission_denied',
  'root_only',
  'outranked',
  'root_protected',
  'cross_site_refused',
  'too_many_requests',
  // not found
  'not_found',
  'user_not_found',
  'token_not_found',
  'channel_not_found',
  'channel_key_not_found',
  'redemption_not_found',
  // refused input
  'model_not_in_channel',
] as const;

/** A refusal the console knows how to say in every language it speaks. */
export type MessageCode = (typeof MESSAGE_CODES)[number];

export function isMessageCode(value: unknown): value is MessageCode {
  return typeof value === 'string' && (MESSAGE_CODES as readonly string[]).includes(value);
}
