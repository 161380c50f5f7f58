// Mapping the source's redemption codes: under offset ids, their owner and
// redeemer offset like every user id; with --merge a code already in the
// target is left out (reported as a clash, by id and name, never the code).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { takenRedemptionCodes } from '../repositories/importRows';
import { Outcome, UNCARRIED_FIELDS } from './outcome';
import type { MappingState, Plan } from './plan';
import { isDeleted, keyText, num, text, type Row } from './sourceValues';

function redemptionRecord(row: Row, key: string, offsets: MappingState['offsets']): Plan['redemptions'][number] {
  const redeemedBy = num(row.used_user_id);
  return {
    id: offsets.redemptions + num(row.id),
    user_id: num(row.user_id) ? offsets.users + num(row.user_id) : 0,
    key,
    status: num(row.status, 1),
    name: text(row.name).slice(0, 64),
    quota: num(row.quota),
    created_time: num(row.created_time),
    redeemed_time: num(row.redeemed_time),
    redeemed_by: redeemedBy ? offsets.users + redeemedBy : 0,
  };
}

/** The redemption codes to carry. */
export async function mapRedemptions(
  db: Kysely<Database>,
  sourceRedemptions: Row[],
  state: MappingState,
): Promise<{ outcome: Outcome; redemptions: Plan['redemptions'] }> {
  const outcome = new Outcome('redemptions', sourceRedemptions.length);
  const takenCodes = new Set(state.merge ? await takenRedemptionCodes(db) : []);
  const redemptions: Plan['redemptions'] = [];
  for (const row of sourceRedemptions) {
    const label = `#${num(row.id)} ${text(row.name)}`;
    if (isDeleted(row)) {
      outcome.leave('deleted in the source', label);
      continue;
    }
    const key = keyText(row.key);
    if (takenCodes.has(key)) {
      outcome.leave('its code is already a code in the target', label);
      state.clashes.push(`redemption code ${label}: the code is already a target code: left out`);
      continue;
    }
    takenCodes.add(key);
    state.uncarried.note('redemptions', row, UNCARRIED_FIELDS.redemptions);
    redemptions.push(redemptionRecord(row, key, state.offsets));
  }
  outcome.carried = redemptions.length;
  return { outcome, redemptions };
}
