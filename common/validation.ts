/** Rules both the console and the server apply to account input. */
export const USERNAME_MAX = 12;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
export const DISPLAY_NAME_MAX = 20;
export const EMAIL_MAX = 50;

/** Usernames: 1..12 characters, letters, digits, `_`, `-`, `.` only (no spaces, no control characters). */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{1,12}$/;

/** A JSON object's fields (not an array, not null), or undefined when `raw` is not JSON or not an object. */
export function jsonObjectOf(raw: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}
