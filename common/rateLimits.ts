/**
 * Relay rate limits: requests per minute (RPM) and tokens per minute (TPM).
 * Shared by the server (enforcement, validation) and the console (forms, the
 * GroupRateLimits setting, the token list).
 *
 * Where a limit comes from:
 * - a user's: their own override (`rpm_limit`/`tpm_limit`, set by an admin),
 *   else their group's entry in the GroupRateLimits option, else its
 *   `default` entry; 0 means unlimited.
 * - a token's: its own override, else none (the user's limit covers all of
 *   the user's tokens together). A token's own limit may only be lower than
 *   the user's: it narrows one key, it never widens the account.
 */
import { jsonObjectOf } from './validation';

/** One pair of per-minute limits; 0 = unlimited. */
export interface RateLimitPair {
  rpm: number;
  tpm: number;
}

/** The largest limit a form or the option accepts (a billion a minute is unlimited in practice). */
export const MAX_RATE_LIMIT = 1_000_000_000;

export const DEFAULT_GROUP_RATE_LIMITS: Record<string, RateLimitPair> = { default: { rpm: 0, tpm: 0 } };

const isLimit = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_RATE_LIMIT;

/**
 * The GroupRateLimits table parsed, or undefined when it is not acceptable: a
 * JSON object of groups, each an object with whole `rpm` and `tpm` from 0 to
 * MAX_RATE_LIMIT (a missing one is 0) and nothing else. Console and server
 * apply the same rule.
 */
export function parseGroupRateLimits(raw: string): Record<string, RateLimitPair> | undefined {
  const parsed = jsonObjectOf(raw);
  if (!parsed) return undefined;
  const table: Record<string, RateLimitPair> = {};
  for (const [group, entry] of Object.entries(parsed)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
    const { rpm = 0, tpm = 0, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0 || !isLimit(rpm) || !isLimit(tpm)) return undefined;
    table[group] = { rpm, tpm };
  }
  return table;
}

/** A user's limits: the override where set (null = none), else the group's, else `default`'s. */
export function userRateLimits(
  user: { group: string; rpm_limit?: number | null; tpm_limit?: number | null },
  groups: Record<string, RateLimitPair>,
): RateLimitPair {
  const groupLimits = groups[user.group] ?? groups.default ?? { rpm: 0, tpm: 0 };
  return {
    rpm: user.rpm_limit === null || user.rpm_limit === undefined ? groupLimits.rpm : Number(user.rpm_limit),
    tpm: user.tpm_limit === null || user.tpm_limit === undefined ? groupLimits.tpm : Number(user.tpm_limit),
  };
}

/** The tighter of two limits, 0 being unlimited. */
export const tighter = (first: number, second: number): number => {
  if (first === 0) return second;
  return second === 0 ? first : Math.min(first, second);
};

/** What limits a token's requests in effect: the tighter of its own and its user's. */
export function effectiveTokenRateLimits(
  token: { rpm_limit?: number | null; tpm_limit?: number | null },
  user: RateLimitPair,
): RateLimitPair {
  return { rpm: tighter(Number(token.rpm_limit ?? 0), user.rpm), tpm: tighter(Number(token.tpm_limit ?? 0), user.tpm) };
}

/**
 * An override from a form: '' or null clears it (inherit), else a whole
 * number from 0 to MAX_RATE_LIMIT. `ceiling` (0 = none) is the most it may
 * be: a token's override may not exceed its user's limit, nor be 0
 * ("unlimited") under a limited user.
 */
export function parseRateLimitOverride(raw: unknown, name: 'rpm' | 'tpm', ceiling = 0): { value: number | null } | { error: string } {
  if (raw === null || raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return { value: null };
  const value = Number(raw);
  if (!isLimit(value))
    return { error: `the ${name.toUpperCase()} limit must be a whole number from 0 (unlimited) to ${MAX_RATE_LIMIT}, or empty to inherit` };
  if (ceiling > 0 && (value === 0 || value > ceiling)) {
    return { error: `the ${name.toUpperCase()} limit may not exceed the account's limit of ${ceiling}` };
  }
  return { value };
}
