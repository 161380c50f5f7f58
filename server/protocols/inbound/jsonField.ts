// One field of a JSON object read straight from its bytes, without parsing the
// whole document: the relay needs only `usage` from an upstream's answer, and
// parsing the rest (every choice and message) only made garbage.
import type { JsonAnswer, Usage } from './types';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * The index just past the string that opens at `start` (a quote), or -1 when it never closes. The next quote is
 * found by Buffer's native search (an answer's bytes are mostly the text of its strings); it closes the string
 * unless an odd number of backslashes stands right before it.
 */
function skipString(bytes: Buffer, start: number): number {
  let quote = bytes.indexOf(QUOTE, start + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH && quote - 1 - backslashes > start) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    quote = bytes.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

/** The index just past the object or array that opens at `start`, or -1 when it never closes. */
function skipContainer(bytes: Buffer, start: number): number {
  let depth = 0;
  for (let index = start; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index = skipString(bytes, index) - 1;
      if (index < 0) return -1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** Whether the bytes from `start` to `end` are exactly `key` (ASCII). */
function equalsAscii(bytes: Buffer, start: number, end: number, key: string): boolean {
  if (end - start !== key.length) return false;
  for (let index = 0; index < key.length; index += 1) if (bytes[start + index] !== key.charCodeAt(index)) return false;
  return true;
}

/**
 * The value after a key that ends at `end`, when a colon follows it: found
 * when it is an object or an array that parses, else malformed. Undefined
 * when no colon follows (the key was a value, not a key).
 */
function valueAfterKey(bytes: Buffer, end: number): FieldRead | undefined {
  let next = end;
  while (next < bytes.length && isSpace(bytes[next])) next += 1;
  if (bytes[next] !== COLON) return undefined;
  next += 1;
  while (next < bytes.length && isSpace(bytes[next])) next += 1;
  const first = bytes[next];
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return { malformed: true };
  const valueEnd = skipContainer(bytes, next);
  if (valueEnd < 0) return { malformed: true };
  try {
    return { found: true, value: JSON.parse(bytes.toString('utf8', next, valueEnd)) };
  } catch {
    return { malformed: true };
  }
}

export type FieldRead = { found: true; value: unknown } | { found: false } | { malformed: true };

/**
 * The value of `key` (plain ASCII, no escapes) among the top-level keys of the
 * JSON object in `bytes`, when that value is an object or an array. Keys inside
 * nested objects and text inside strings never match. `malformed` means the
 * bytes could not be read this way; parse the whole document instead.
 */
export function topLevelObjectField(bytes: Buffer, key: string): FieldRead {
  let depth = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      const end = skipString(bytes, index);
      if (end < 0) return { malformed: true };
      if (depth === 1 && equalsAscii(bytes, index + 1, end - 1, key)) {
        const value = valueAfterKey(bytes, end);
        if (value) return value;
      }
      index = end - 1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
    }
  }
  return depth === 0 ? { found: false } : { malformed: true };
}

/**
 * A top-level field of a JSON answer (an object or an array): read from the
 * answer's bytes alone when they tell, else from its parsed value (parsed
 * only then); undefined when the answer has no such field.
 */
export function answerField(json: JsonAnswer, key: string): unknown {
  const field = topLevelObjectField(json.bytes, key);
  if (!('found' in field)) return (json.value as Record<string, unknown> | undefined)?.[key];
  return field.found ? field.value : undefined;
}

/**
 * The usage a JSON answer reports, in the relay's terms by the protocol's
 * `read`: from the answer's bytes alone when they tell, else from its parsed
 * value; undefined when it reports none, or nothing billable.
 */
export function reportedAnswerUsage<Shape extends object>(json: JsonAnswer, read: (usage: Shape) => Usage): Usage | undefined {
  const usage = answerField(json, 'usage');
  if (!usage || typeof usage !== 'object') return undefined;
  const billed = read(usage as Shape);
  return billed.promptTokens + billed.completionTokens > 0 ? billed : undefined;
}
