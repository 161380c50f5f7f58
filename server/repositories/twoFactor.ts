// Two-factor enrolments and recovery codes. Every write that spends something
// (a time step, a recovery code) is one conditional UPDATE, so two nodes (or
// two requests) racing with the same code cannot both get through.
import { createHash } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/database';
import type { TwoFactorTable } from '../db/schema/twoFactor';

type Db = Kysely<Database> | Transaction<Database>;

export type TwoFactorRow = Selectable<TwoFactorTable>;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Recovery codes are compared without case, spaces or dashes. */
export function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

export const hashRecoveryCode = (code: string) => createHash('sha256').update(normaliseRecoveryCode(code)).digest('hex');

export async function findTwoFactor(db: Db, userId: number): Promise<TwoFactorRow | undefined> {
  const row = await db.selectFrom('two_factor').selectAll().where('user_id', '=', userId).executeTakeFirst();
  return (
    row && {
      ...row,
      user_id: Number(row.user_id),
      enabled: Number(row.enabled),
      last_step: Number(row.last_step),
      created_at: Number(row.created_at),
      enabled_at: Number(row.enabled_at),
    }
  );
}

export async function hasTwoFactor(db: Db, userId: number): Promise<boolean> {
  return (await findTwoFactor(db, userId))?.enabled === 1;
}

/** Starts (or restarts) an enrolment: the new secret waits, disabled, for its first code. Refused once enabled. */
export async function startEnrolment(db: Kysely<Database>, userId: number, secretSealed: string): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    const existing = await findTwoFactor(transaction, userId);
    if (existing?.enabled === 1) return false;
    if (existing) await transaction.deleteFrom('two_factor').where('user_id', '=', userId).where('enabled', '=', 0).execute();
    await transaction
      .insertInto('two_factor')
      .values({ user_id: userId, secret_sealed: secretSealed, enabled: 0, last_step: 0, created_at: nowSeconds(), enabled_at: 0 })
      .execute();
    return true;
  });
}

/**
 * Spends a TOTP time step: true when no code of this step (or a later one) was
 * accepted before, so each code works once and an older one never after it.
 */
export async function acceptTimeStep(db: Db, userId: number, step: number, enabled: 0 | 1): Promise<boolean> {
  const result = await db
    .updateTable('two_factor')
    .set({ last_step: step })
    .where('user_id', '=', userId)
    .where('enabled', '=', enabled)
    .where('last_step', '<', step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Spends a recovery code: true once per unused code. */
export async function useRecoveryCode(db: Db, userId: number, code: string): Promise<boolean> {
  if (!normaliseRecoveryCode(code)) return false;
  const result = await db
    .updateTable('two_factor_recovery_codes')
    .set({ used_at: nowSeconds() })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hashRecoveryCode(code))
    .where('used_at', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) >= 1;
}

/** Turns the pending enrolment on with a fresh set of recovery codes (given in clear, stored hashed). */
export async function enableTwoFactor(db: Kysely<Database>, userId: number, recoveryCodes: string[]): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction.updateTable('two_factor').set({ enabled: 1, enabled_at: nowSeconds() }).where('user_id', '=', userId).execute();
    await transaction.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
    await transaction
      .insertInto('two_factor_recovery_codes')
      .values(recoveryCodes.map((code) => ({ user_id: userId, code_hash: hashRecoveryCode(code), used_at: 0 })))
      .execute();
  });
}

export async function unusedRecoveryCodes(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('two_factor_recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('user_id', '=', userId)
    .where('used_at', '=', 0)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Removes the enrolment and its recovery codes (disable, root's reset, account deletion). */
export async function removeTwoFactor(db: Kysely<Database>, userId: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
    const result = await transaction.deleteFrom('two_factor').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}
