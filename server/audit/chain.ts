// The audit log's hash chain. Each row stores prev_hash (the row before it's
// hash; the anchor's for the first row) and hash = sha256(prev_hash + the
// canonical JSON of its fields), and `seq` counts 1, 2, 3... without a gap. A
// row edited in the database no longer matches its hash; a row deleted
// leaves a gap in seq and a prev_hash that follows nothing; the last row
// deleted no longer matches the chain's head (audit_chain). Nodes sharing
// the database append one at a time: a compare-and-set on the head, retried
// (repositories/auditLog.ts).
//
// What the chain proves is bounded: someone who can write the database can
// also rewrite every later hash and the head. It catches edits made by hand
// or by a careless script, not a determined owner of the database; an export
// of the head hash kept elsewhere closes that gap.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditChainStatus, AuditChanges, AuditRecord } from '../../common/audit';
import type { Database } from '../db/database';
import type { AuditFields } from '../db/schema/auditLog';
import { appendLinkedRow, auditRowsAfter, readAuditChain, type AuditRow, type NewAuditRow } from '../repositories/auditLog';

export type { AuditFields };

/** The widest each text column is (migration 0022), in characters. */
const TEXT_LIMITS = {
  username: 64,
  ip: 64,
  user_agent: 512,
  request_id: 128,
  method: 8,
  route: 255,
  action: 64,
  target_type: 32,
  target_id: 64,
} as const;

/** MySQL TEXT holds 65,535 bytes: 16,000 characters fit even at 4 bytes each. */
export const CHANGES_MAX = 16_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as every database will give it back: no NUL (PostgreSQL refuses it),
 * no lone surrogate (the drivers write U+FFFD for one), at most `limit`
 * characters counted as MySQL counts them. A hash over anything else would
 * not match the row read back.
 */
export function storableText(value: string, limit: number): string {
  const clean = value.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\uFFFD');
  const characters = Array.from(clean);
  return characters.length > limit ? characters.slice(0, limit).join('') : clean;
}

/** The fields with every text cut to its column. */
export function storableFields(fields: AuditFields): AuditFields {
  const result = { ...fields };
  for (const [column, limit] of Object.entries(TEXT_LIMITS) as Array<[keyof typeof TEXT_LIMITS, number]>) {
    result[column] = storableText(fields[column], limit);
  }
  if (result.changes !== null) result.changes = storableText(result.changes, CHANGES_MAX);
  return result;
}

/** Keys in code-unit order: the same on every machine, whatever its locale. */
function byCodeUnits(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** JSON with every object's keys sorted, so one row always hashes the same whatever order its fields came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => byCodeUnits(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The hashed fields of a row as the database returned it (drivers differ on number types). */
function hashedFieldsOf(row: AuditRow): AuditFields & { seq: number } {
  const nullableNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    seq: Number(row.seq),
    created_at: Number(row.created_at),
    organization_id: nullableNumber(row.organization_id),
    user_id: nullableNumber(row.user_id),
    username: row.username,
    role: Number(row.role),
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    method: row.method,
    route: row.route,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    status: Number(row.status),
    success: Number(row.success),
    changes: row.changes ?? null,
  };
}

export function chainHash(prevHash: string, fields: AuditFields & { seq: number }): string {
  return createHash('sha256').update(prevHash).update(canonicalJson(fields)).digest('hex');
}

/** Appends tried before giving up: each retry means another node appended in between. */
const APPEND_ATTEMPTS = 20;

/** Appends one row at the chain's head; throws after APPEND_ATTEMPTS lost races (the caller logs and counts it). */
export async function appendAudit(db: Kysely<Database>, fields: AuditFields): Promise<void> {
  const stored = storableFields(fields);
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt += 1) {
    const appended = await appendLinkedRow(db, (head): NewAuditRow => {
      const seq = head.seq + 1;
      return { ...stored, seq, prev_hash: head.hash, hash: chainHash(head.hash, { ...stored, seq }) };
    });
    if (appended) return;
    // another node moved the head: back off a little, a random while, so two nodes do not collide again
    await new Promise((wake) => setTimeout(wake, Math.random() * 5 * (attempt + 1)));
  }
  throw new Error(`audit append lost ${APPEND_ATTEMPTS} races for the chain's head`);
}

const WALK_PAGE = 1000;

type Break = NonNullable<AuditChainStatus['broken_at']>;

/** The first fault of one row, given the seq and hash the row before it left. */
function faultOf(row: AuditRow, previous: { seq: number; hash: string }): Break | undefined {
  const fields = hashedFieldsOf(row);
  if (fields.seq !== previous.seq + 1) return { seq: previous.seq + 1, id: null, kind: 'missing', reason: 'the row is missing (deleted)' };
  if (row.prev_hash !== previous.hash)
    return {
      seq: fields.seq,
      id: Number(row.id),
      kind: 'unlinked',
      reason: 'the row does not follow the one before it (prev_hash differs)',
    };
  if (chainHash(row.prev_hash, fields) !== row.hash)
    return { seq: fields.seq, id: Number(row.id), kind: 'changed', reason: 'the row was changed after it was written (hash differs)' };
  return undefined;
}

async function walkOnce(db: Kysely<Database>): Promise<{ status: AuditChainStatus; anchorSeq: number }> {
  const chain = await readAuditChain(db);
  const checked_at = Math.floor(Date.now() / 1000);
  const previous = { seq: chain.anchor_seq, hash: chain.anchor_hash };
  let rows = 0;
  const status = (broken_at?: Break): AuditChainStatus => ({
    intact: broken_at === undefined,
    rows,
    head_seq: chain.head_seq,
    anchor_seq: chain.anchor_seq,
    ...(broken_at ? { broken_at } : {}),
    checked_at,
  });
  for (;;) {
    const page = await auditRowsAfter(db, previous.seq, chain.head_seq, WALK_PAGE);
    for (const row of page) {
      const fault = faultOf(row, previous);
      if (fault) return { status: status(fault), anchorSeq: chain.anchor_seq };
      rows += 1;
      previous.seq = Number(row.seq);
      previous.hash = row.hash;
    }
    if (page.length < WALK_PAGE) break;
  }
  if (previous.seq < chain.head_seq) {
    return {
      status: status({ seq: previous.seq + 1, id: null, kind: 'missing', reason: 'the row is missing (deleted)' }),
      anchorSeq: chain.anchor_seq,
    };
  }
  if (previous.hash !== chain.head_hash) {
    return {
      status: status({ seq: chain.head_seq, id: null, kind: 'head', reason: "the last row does not match the chain's head" }),
      anchorSeq: chain.anchor_seq,
    };
  }
  return { status: status(), anchorSeq: chain.anchor_seq };
}

/** Walks the chain from its anchor to its head; a walk that retention's pruning overtook is walked again. */
export async function verifyAuditChain(db: Kysely<Database>): Promise<AuditChainStatus> {
  let walk = await walkOnce(db);
  for (let again = 0; again < 2 && !walk.status.intact; again += 1) {
    if ((await readAuditChain(db)).anchor_seq === walk.anchorSeq) break;
    walk = await walkOnce(db);
  }
  return walk.status;
}

function parsedChanges(text: string | null): AuditChanges | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as AuditChanges;
  } catch {
    return null;
  }
}

/** A row as the console API sends it. */
export function toAuditRecord(row: AuditRow): AuditRecord {
  const fields = hashedFieldsOf(row);
  return {
    ...fields,
    id: Number(row.id),
    success: fields.success === 1,
    changes: parsedChanges(fields.changes),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}
