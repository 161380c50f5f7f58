// Mapping the source's users: live ones carried under offset ids; with
// --merge a username taken in the target is renamed, and an access token or
// invite code already a target user's is not carried (both reported as
// clashes). Access tokens are carried as their hashes, never as themselves.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { hashAccessToken } from '../secrets';
import { takenAccessTokenHashes, takenAffCodes, takenUsernames } from '../repositories/importRows';
import { Outcome, UNCARRIED_FIELDS } from './outcome';
import type { MappingState, Plan } from './plan';
import { isDeleted, keyText, num, text, type Row } from './sourceValues';

/** What the target's users already hold (empty unless --merge). */
interface TakenUserKeys {
  names: Set<string>;
  accessTokens: Set<string | null>;
  affCodes: Set<string | null>;
}

async function takenUserKeys(db: Kysely<Database>, merge: boolean): Promise<TakenUserKeys> {
  const names = new Set(merge ? await takenUsernames(db) : []);
  const accessTokens = new Set(merge ? await takenAccessTokenHashes(db) : []);
  const affCodes = new Set(merge ? await takenAffCodes(db) : []);
  return { names, accessTokens, affCodes };
}

/** The source's username, or the first free `<name>.<id>[.<n>]` when it is taken. */
function uniqueUsername(original: string, sourceId: number, taken: Set<string>): string {
  let username = original;
  for (let attempt = 0; taken.has(username); attempt += 1) username = `${original}.${sourceId}${attempt ? `.${attempt}` : ''}`;
  return username;
}

/** The access token's hash and the invite code, each left out when a target user holds it already. */
function carriedUserKeys(row: Row, label: string, taken: TakenUserKeys, clashes: string[]) {
  const accessToken = keyText(row.access_token);
  let accessTokenHash: string | null = accessToken ? hashAccessToken(accessToken) : null;
  if (accessTokenHash && taken.accessTokens.has(accessTokenHash)) {
    clashes.push(`the access token of ${label} is already a target user's: not carried`);
    accessTokenHash = null;
  }
  let affCode: string | null = keyText(row.aff_code) || null;
  if (affCode && taken.affCodes.has(affCode)) {
    clashes.push(`the invite code of ${label} is already a target user's: not carried`);
    affCode = null;
  }
  return { accessTokenHash, affCode };
}

function userRecord(
  row: Row,
  id: number,
  username: string,
  keys: { accessTokenHash: string | null; affCode: string | null },
  usersOffset: number,
  now: number,
): Plan['users'][number] {
  return {
    id,
    username,
    password_hash: text(row.password),
    display_name: text(row.display_name) || username,
    role: num(row.role, 1),
    status: num(row.status, 1),
    email: text(row.email),
    github_id: text(row.github_id),
    wechat_id: text(row.wechat_id),
    access_token_hash: keys.accessTokenHash,
    quota: num(row.quota),
    used_quota: num(row.used_quota),
    request_count: num(row.request_count),
    group: text(row.group) || 'default',
    aff_code: keys.affCode,
    inviter_id: num(row.inviter_id) ? usersOffset + num(row.inviter_id) : 0,
    session_version: 0,
    created_at: now,
  };
}

/** The users to carry, and the live source users' names by source id (their tokens are carried with them). */
export async function mapUsers(
  db: Kysely<Database>,
  sourceUsers: Row[],
  state: MappingState,
): Promise<{ outcome: Outcome; users: Plan['users']; liveUsers: Map<number, string> }> {
  const outcome = new Outcome('users', sourceUsers.length);
  const taken = await takenUserKeys(db, state.merge);
  const liveUsers = new Map<number, string>();
  const users: Plan['users'] = [];
  const now = Math.floor(Date.now() / 1000);
  for (const row of sourceUsers) {
    const sourceId = num(row.id);
    const original = text(row.username);
    if (isDeleted(row)) {
      outcome.leave('deleted in the source', `#${sourceId} ${original}`);
      continue;
    }
    state.sourceTotals.userQuota += num(row.quota);
    state.sourceTotals.userUsedQuota += num(row.used_quota);
    const username = uniqueUsername(original, sourceId, taken.names);
    if (username !== original)
      state.clashes.push(`username "${original}" (source user #${sourceId}) is taken in the target: imported as "${username}"`);
    taken.names.add(username);
    const keys = carriedUserKeys(row, `"${original}" (source user #${sourceId})`, taken, state.clashes);
    state.uncarried.note('users', row, UNCARRIED_FIELDS.users);
    liveUsers.set(sourceId, username);
    users.push(userRecord(row, state.offsets.users + sourceId, username, keys, state.offsets.users, now));
    state.carried.userQuota += num(row.quota);
    state.carried.userUsedQuota += num(row.used_quota);
  }
  outcome.carried = users.length;
  return { outcome, users, liveUsers };
}
