// Mapping the source's tokens: those of live users, under offset ids, with
// their model limits and allowed addresses read from the product's own
// columns. A key empty, too long, or (--merge) already a target key is left
// out, and never named: a token is named by id and name.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { takenTokenKeys } from '../repositories/importRows';
import { Outcome, UNCARRIED_FIELDS } from './outcome';
import type { MappingState, Plan } from './plan';
import { flag, isDeleted, keyText, num, text, type Row } from './sourceValues';

/** The models a token is limited to ('' for all): new-api keeps a list only while its limit is on. */
function tokenModels(row: Row, newApi: boolean): string {
  if (!newApi) return text(row.models);
  return flag(row.model_limits_enabled) ? text(row.model_limits) : '';
}

function tokenRecord(row: Row, key: string, newApi: boolean, offsets: MappingState['offsets']): Plan['tokens'][number] {
  const models = tokenModels(row, newApi);
  const ips = text(newApi ? row.allow_ips : row.subnet)
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(',');
  return {
    id: offsets.tokens + num(row.id),
    user_id: offsets.users + num(row.user_id),
    key,
    status: num(row.status, 1),
    name: text(row.name).slice(0, 64),
    created_time: num(row.created_time),
    accessed_time: num(row.accessed_time),
    expired_time: num(row.expired_time, -1),
    remain_quota: num(row.remain_quota),
    unlimited_quota: flag(row.unlimited_quota),
    used_quota: num(row.used_quota),
    models: models || null,
    allowed_ips: ips || null,
  };
}

/** The tokens to carry (those of the live users mapUsers carried). */
export async function mapTokens(
  db: Kysely<Database>,
  sourceTokens: Row[],
  liveUsers: Map<number, string>,
  newApi: boolean,
  state: MappingState,
): Promise<{ outcome: Outcome; tokens: Plan['tokens'] }> {
  const outcome = new Outcome('tokens', sourceTokens.length);
  const takenKeys = new Set(state.merge ? await takenTokenKeys(db) : []);
  const tokens: Plan['tokens'] = [];
  for (const row of sourceTokens) {
    const label = `#${num(row.id)} ${text(row.name)}`;
    if (isDeleted(row)) {
      outcome.leave('deleted in the source', label);
      continue;
    }
    const owner = liveUsers.get(num(row.user_id));
    if (!owner) {
      outcome.leave('its user no longer exists in the source', label);
      continue;
    }
    state.sourceTotals.tokenRemainQuota += num(row.remain_quota);
    const key = keyText(row.key);
    if (key.length === 0 || key.length > 64) {
      outcome.leave('its key is empty or longer than 64 characters', label);
      continue;
    }
    if (takenKeys.has(key)) {
      outcome.leave('its key is already a key in the target', label);
      state.clashes.push(`token ${label} of "${owner}": its key is already a target token's key: left out`);
      continue;
    }
    takenKeys.add(key);
    state.uncarried.note('tokens', row, UNCARRIED_FIELDS.tokens);
    tokens.push(tokenRecord(row, key, newApi, state.offsets));
    state.carried.tokenRemainQuota += num(row.remain_quota);
  }
  outcome.carried = tokens.length;
  return { outcome, tokens };
}
