// The text an OpenAI stream chunk carries (its chat delta's content or its
// completion's text), read for a local count when the upstream sends no usage.
// A long stream is folded into text as it passes (so memory stays flat), and
// a JSON.parse of every chunk cost more than relaying it: this reads the one
// string it needs straight from the payload when the chunk has the usual
// shape, and parses the whole chunk whenever it is anything else. Pure.

const CONTENT_KEY = '"content"';
const DELTA_OPEN = '"delta":{';
const CHOICES_OPEN = '"choices":[';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Chunk = { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }> };

/** One event's chat deltas or completion texts ('' for a malformed event: it carries no billable text). */
export function textOfPayload(payload: string): string {
  const quick = quickDeltaText(payload);
  return quick ?? parsedText(payload);
}

/** The whole chunk parsed: every choice's delta content, or its text. */
function parsedText(payload: string): string {
  let text = '';
  try {
    const parsed = JSON.parse(payload) as Chunk;
    for (const choice of parsed.choices ?? []) {
      if (typeof choice.delta?.content === 'string') text += choice.delta.content;
      else if (typeof choice.text === 'string') text += choice.text;
    }
  } catch {
    return '';
  }
  return text;
}

/** True when `text` from `from` to `to` holds none of the characters that open or close a JSON object or array. */
function flat(text: string, from: number, to: number): boolean {
  for (let at = from; at < to; at += 1) {
    const code = text.charCodeAt(at);
    // { } [ ]
    if (code === 0x7b || code === 0x7d || code === 0x5b || code === 0x5d) return false;
  }
  return true;
}

/** Where the JSON string that opens at `open` closes (its closing quote), or -1. */
function stringEnd(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/** True when the key at `content` sits directly in the delta object, which sits directly in the first choice. */
function inFirstChoiceDelta(payload: string, content: number): boolean {
  const delta = payload.lastIndexOf(DELTA_OPEN, content);
  if (delta === -1 || !flat(payload, delta + DELTA_OPEN.length, content)) return false;
  const choices = payload.lastIndexOf(CHOICES_OPEN, delta);
  if (choices === -1) return false;
  const choiceOpen = choices + CHOICES_OPEN.length;
  const before = payload.charCodeAt(content - 1);
  // the choice opens with {, and , or { comes before the key
  return payload.charCodeAt(choiceOpen) === 0x7b && flat(payload, choiceOpen + 1, delta) && (before === 0x2c || before === 0x7b);
}

/** The JSON string (or null, read as '') at `value` and where it ends; undefined for anything else. */
function stringAt(payload: string, value: number): { text: string; end: number } | undefined {
  if (payload.startsWith('null', value)) return { text: '', end: value + 4 };
  if (payload.charCodeAt(value) !== QUOTE) return undefined;
  const close = stringEnd(payload, value);
  if (close === -1) return undefined;
  const raw = payload.slice(value + 1, close);
  if (!raw.includes('\\')) return { text: raw, end: close + 1 };
  try {
    return { text: JSON.parse(payload.slice(value, close + 1)) as string, end: close + 1 };
  } catch {
    return undefined;
  }
}

/**
 * The delta's content of a one-choice chat chunk as OpenAI writes it
 * (`"choices":[{…,"delta":{…,"content":"…"}…}]`, no completion `text`), or
 * undefined for any other chunk, which is then parsed whole. A quoted name
 * `"content"` can only be a key: inside a string its quotes are escaped.
 */
function quickDeltaText(payload: string): string | undefined {
  const content = payload.indexOf(CONTENT_KEY);
  if (content === -1) {
    // no content and no text anywhere: nothing to bill, whatever else the chunk holds
    return payload.includes('"text"') ? undefined : '';
  }
  if (payload.indexOf(CONTENT_KEY, content + 1) !== -1 || payload.includes('"text"')) return undefined;
  if (payload.charCodeAt(0) !== 0x7b || payload.charCodeAt(payload.length - 1) !== 0x7d) return undefined;
  if (!inFirstChoiceDelta(payload, content)) return undefined;
  const colon = content + CONTENT_KEY.length;
  if (payload.charCodeAt(colon) !== 0x3a) return undefined;
  const value = stringAt(payload, colon + 1);
  if (value === undefined) return undefined;
  // , or } after the value
  const after = payload.charCodeAt(value.end);
  return after === 0x2c || after === 0x7d ? value.text : undefined;
}
