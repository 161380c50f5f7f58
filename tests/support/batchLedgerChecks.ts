// The ledger checks a batch test makes after every runner pass, and the full
// price of one request (what a client's own call is billed), measured from the
// key's consume logs. For the batch tests on one user (id 1) and one key.
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../server/db/database';
import { ledgerState } from './ledgerState';

/**
 * Checks start - logged charges - held = balance for the user and the key, and
 * that the user's hold is exactly what the tasks hold; the ledger as it is.
 */
export async function expectBatchLedger(db: Kysely<Database>, tokenId: number, start: { user: number; token: number }) {
  const state = await ledgerState(db, 1, tokenId);
  const tasks = await db.selectFrom('tasks').select('held_quota').execute();
  expect(state.quota + state.userHeld + state.logged).toBe(start.user);
  expect(state.remain + state.tokenHeld + state.logged).toBe(start.token);
  expect(state.userHeld).toBe(tasks.reduce((sum, row) => sum + Number(row.held_quota), 0));
  return state;
}

/** What `call` adds to the key's consume logs, waiting for its log to land (it is written after the answer). */
export async function loggedBy(db: Kysely<Database>, tokenId: number, call: () => Promise<unknown>): Promise<number> {
  const before = (await ledgerState(db, 1, tokenId)).logged;
  await call();
  for (let wait = 0; wait < 100 && (await ledgerState(db, 1, tokenId)).logged === before; wait += 1)
    await new Promise((wake) => setTimeout(wake, 20));
  return (await ledgerState(db, 1, tokenId)).logged - before;
}
