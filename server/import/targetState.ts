// Where the import goes: what the target holds (a fresh install, an earlier
// import of this same source, or anything else), and from that whether the
// import is refused, resumed (only the logs are left to copy) or replaces a
// fresh root account, and by how much the source's ids are offset.
import type { Kysely } from 'kysely';
import { Role } from '../../common/roles';
import type { Database } from '../db/database';
import { highestId, onlyUser, rowCount, userIdsAndNames } from '../repositories/importRows';
import { isDeleted, num, text, type Row } from './sourceValues';

type Db = Kysely<Database>;

/** What the target holds. */
export interface TargetState {
  fresh: boolean;
  freshRoot?: { id: number; username: string; quota: number; used: number };
  summary: string;
}

/** Added to each table's source ids. */
export interface Offsets {
  users: number;
  tokens: number;
  channels: number;
  redemptions: number;
  logs: number;
}

/** How the import lands in the target. */
export interface Placement {
  resumed: boolean;
  refused?: string;
  replaceRoot?: TargetState['freshRoot'];
  offsets: Offsets;
}

const maxId = async (db: Db, table: 'users' | 'tokens' | 'channels' | 'redemptions' | 'logs') => num(await highestId(db, table));

const countOf = async (db: Db, table: 'users' | 'tokens' | 'channels' | 'redemptions') => num(await rowCount(db, table));

/** Whether the target's users are exactly the source's live users, under their ids and names (an earlier import of this source). */
async function holdsSourceUsers(db: Db, sourceUsers: Row[]): Promise<boolean> {
  const live = sourceUsers.filter((row) => !isDeleted(row));
  const target = await userIdsAndNames(db);
  if (live.length === 0 || target.length !== live.length) return false;
  const names = new Map(target.map((row) => [num(row.id), row.username]));
  return live.every((row) => names.get(num(row.id)) === text(row.username));
}

/**
 * What the target holds: a fresh install (nothing, or only the root account
 * it made on first start, unused, and no tokens, channels or codes) takes the
 * source's ids as they are, the fresh root giving way to the source's users;
 * anything more needs --merge.
 */
export async function targetState(db: Db): Promise<TargetState> {
  const [users, tokens, channels, redemptions] = await Promise.all([
    countOf(db, 'users'),
    countOf(db, 'tokens'),
    countOf(db, 'channels'),
    countOf(db, 'redemptions'),
  ]);
  const summary = `${users} user(s), ${tokens} token(s), ${channels} channel(s), ${redemptions} redemption code(s)`;
  if (tokens + channels + redemptions > 0 || users > 1) return { fresh: false, summary };
  if (users === 0) return { fresh: true, summary };
  const root = await onlyUser(db);
  const untouched = num(root.role) >= Role.root && num(root.used_quota) === 0 && num(root.request_count) === 0;
  return untouched
    ? { fresh: true, freshRoot: { id: num(root.id), username: root.username, quota: num(root.quota), used: 0 }, summary }
    : { fresh: false, summary };
}

/** Refused, resumed or written afresh, and under which ids. */
export async function placeImport(
  db: Db,
  state: TargetState,
  sourceUsers: Row[],
  options: { merge: boolean; withLogs: boolean },
): Promise<Placement> {
  const { merge } = options;
  // the same command run again after the logs stopped half-way: the rest of the source is here already
  const resumed = !state.fresh && !merge && options.withLogs && (await holdsSourceUsers(db, sourceUsers));
  const refused =
    !state.fresh && !merge && !resumed
      ? `the target already holds data (${state.summary}); give --merge to add the source to it`
      : undefined;
  const replaceRoot = state.fresh && !merge ? state.freshRoot : undefined;
  // a fresh target keeps the source's ids (logs too, when it has none, so a resumed copy finds its batches)
  const offsets = resumed
    ? { users: 0, tokens: 0, channels: 0, redemptions: 0, logs: 0 }
    : {
        users: replaceRoot ? 0 : await maxId(db, 'users'),
        tokens: await maxId(db, 'tokens'),
        channels: await maxId(db, 'channels'),
        redemptions: await maxId(db, 'redemptions'),
        logs: await maxId(db, 'logs'),
      };
  return { resumed, refused, replaceRoot, offsets };
}
