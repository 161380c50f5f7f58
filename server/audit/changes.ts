// What an audit row says changed: the fields of the target before and after
// the call, only those that differ when both are known, with secrets masked
// by their field's name (and, for settings, by their kind in common/options.ts)
// and long values cut so a row stays small.
import type { AuditChanges } from '../../common/audit';
import { isOptionKey, isSecretOption } from '../../common/options';
import { canonicalJson } from './chain';

/** Fields that hold a secret wherever they appear: channel and token keys, passwords, access tokens, 2FA secrets. */
const SECRET_FIELDS = new Set([
  'key',
  'keys',
  'password',
  'password2',
  'original_password',
  'password_hash',
  'access_token',
  'access_token_hash',
  'secret',
  'totp_secret',
  'secret_sealed',
  'recovery_codes',
]);

/** A value longer than this (as text) is cut: a ratio table of a thousand models says little in an audit row. */
const VALUE_MAX = 2000;

/** Only this much of a secret is shown: its last characters, when it is long enough that they give nothing away. */
const SHOWN_TAIL = 4;
const TAIL_FROM_LENGTH = 16;

export const isSecretField = (field: string) => SECRET_FIELDS.has(field) || (isOptionKey(field) && isSecretOption(field));

/** "***", or "***" and the last four characters of a long secret; an empty secret stays empty (it says "unset"). */
export function maskSecret(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return value;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length >= TAIL_FROM_LENGTH ? `***${text.slice(-SHOWN_TAIL)}` : '***';
}

function capped(value: unknown): unknown {
  if (typeof value === 'string') return value.length > VALUE_MAX ? `${value.slice(0, VALUE_MAX)}… (${value.length} characters)` : value;
  if (value !== null && typeof value === 'object') {
    const text = canonicalJson(value);
    return text.length > VALUE_MAX ? `${text.slice(0, VALUE_MAX)}… (${text.length} characters)` : value;
  }
  return value;
}

function shown(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const field of fields) {
    if (!(field in record)) continue;
    const value = record[field];
    result[field] = isSecretField(field) ? maskSecret(value) : capped(value);
  }
  return result;
}

/** The fields of a value that is a plain object, else none. */
const fieldsOf = (record: Record<string, unknown> | undefined) => (record ? Object.keys(record) : []);

/**
 * The change between `before` and `after`: on an edit only the fields that
 * differ (a secret that changed shows as its masked old and new values), on
 * a create the new record, on a delete the old one. Undefined when nothing changed.
 */
export function changesOf(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): AuditChanges | undefined {
  if (before && after) {
    const fields = [...new Set([...fieldsOf(before), ...fieldsOf(after)])].filter(
      (field) => canonicalJson(before[field]) !== canonicalJson(after[field]),
    );
    if (fields.length === 0) return undefined;
    return { before: shown(before, fields), after: shown(after, fields) };
  }
  if (after) return { after: shown(after, fieldsOf(after)) };
  if (before) return { before: shown(before, fieldsOf(before)) };
  return undefined;
}
