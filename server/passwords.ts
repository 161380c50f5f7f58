// Password hashing. The work factor is the operator's (PASSWORD_HASH_COST, default 10); a stored hash carries
// its own cost, so a change applies to passwords set afterwards and every earlier one still verifies.
import bcrypt from 'bcryptjs';

/** bcrypt's default work factor here: 2^10 rounds, about 0.1 s a hash on one core of these machines. */
export const DEFAULT_PASSWORD_HASH_COST = 10;
/** bcrypt's own bounds. */
export const PASSWORD_HASH_COST_MIN = 4;
export const PASSWORD_HASH_COST_MAX = 31;

export function hashPassword(password: string, cost: number = DEFAULT_PASSWORD_HASH_COST): Promise<string> {
  return bcrypt.hash(password, cost);
}

const equalisers = new Map<number, string>();

/**
 * Whether `password` matches `hash`. An account without a hash (signed up through OAuth: '') or no account at
 * all is compared against a hash of the same cost first, so a wrong username takes as long as a wrong password.
 */
export async function verifyPassword(
  password: string,
  hash: string | undefined | null,
  cost: number = DEFAULT_PASSWORD_HASH_COST,
): Promise<boolean> {
  if (hash) return bcrypt.compare(password, hash);
  let equaliser = equalisers.get(cost);
  if (!equaliser) {
    equaliser = bcrypt.hashSync('switchboard-timing-equaliser', cost);
    equalisers.set(cost, equaliser);
  }
  await bcrypt.compare(password, equaliser);
  return false;
}

/** PASSWORD_HASH_COST from the environment: a whole number within bcrypt's bounds. */
export function passwordHashCostFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PASSWORD_HASH_COST;
  const cost = Number(raw);
  if (!Number.isInteger(cost) || cost < PASSWORD_HASH_COST_MIN || cost > PASSWORD_HASH_COST_MAX) {
    throw new Error(`PASSWORD_HASH_COST must be a whole number from ${PASSWORD_HASH_COST_MIN} to ${PASSWORD_HASH_COST_MAX}, got ${raw}`);
  }
  return cost;
}
