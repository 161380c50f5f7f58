// The most a request's prompt can be billed, read from the whole body rather
// than from the fields one protocol is known to put text in: a client can put
// its prompt anywhere the vendor reads (tool descriptions, JSON schemas,
// token-id arrays, system blocks, documents), and a reservation that looks in
// fewer places than the vendor lets the caller choose its own debt.
//
// The rule (docs/billing.md's billing policy says it in the same words): every
// value and every key counts one token, plus the bytes it is sent as. A
// string (a key too) counts its UTF-8 bytes, since no token of the vendors' byte-level
// encodings stands for less than one byte; a number, `true`, `false` and
// `null` count the characters of their JSON form. The relay forwards a
// client's bytes unchanged only when every number in them is written as JSON
// prints it back (intake.ts, hasRewrittenNumber), so a 100,000-digit literal
// is never sent as counted at one token. The one added token per value covers
// what a vendor adds around it (roles, separators, a tool's rendering) and a
// token id in an array.
// Media count what the vendor bills for them, not their base64 bytes: images
// by their tiles or pixels when the header says the size, else the model's
// most for one image; audio and video by their bytes; a part whose cost cannot
// be read from the request (a file by id or URL, a PDF) makes the bound the
// model's context window. Only the media payload itself (base64 data, a
// data: URL of base64) is priced as media: every other field of a media part
// is walked like any other, so text riding beside an image is counted, and so
// is a "payload" that is not base64 (text in an audio part's data field). The prompt can
// never be longer than the model's window, so it also caps the bound. The
// window is the caller's to give (the relay asks billing's catalog:
// CountOptions.contextWindow); without it, the largest.
import { isObject } from '../shared';

/** The bound for a model whose context window the catalog does not know: the largest windows served today. */
export const UNKNOWN_CONTEXT_WINDOW = 2_097_152;

/** Tokens a text costs: its byte length for a bound, or a tokenizer's count for a closer figure. */
export type TextCost = (text: string) => number;

const byteLength: TextCost = (text) => Buffer.byteLength(text, 'utf8');

export interface PromptMeasure {
  /** Tokens of everything counted. */
  tokens: number;
  /** A part whose cost the request does not tell was found: the context window bounds the prompt. */
  uncountable: boolean;
}

/**
 * The prompt's bound for `model`: every part of `body` counted as above, at
 * most the model's context window `contextWindow` (exactly it when a part
 * cannot be counted; UNKNOWN_CONTEXT_WINDOW when the caller knows none).
 * `textCost` replaces the byte count by a tokenizer's for a tighter figure.
 */
export function promptBound(body: unknown, model: string, textCost: TextCost = byteLength, prompts = 1, contextWindow?: number): number {
  const measured = measurePrompt(body, model, textCost);
  // each prompt of a batch (embeddings inputs, completions prompts) has a window of its own
  const window = (contextWindow ?? UNKNOWN_CONTEXT_WINDOW) * Math.max(1, prompts);
  return measured.uncountable ? window : Math.min(measured.tokens, window);
}

/** How many prompts a completions `prompt` or an embeddings `input` holds: an array of strings or of token arrays is a batch. */
export function batchSize(input: unknown): number {
  return Array.isArray(input) && input.length > 0 && (typeof input[0] === 'string' || Array.isArray(input[0])) ? input.length : 1;
}

/**
 * Walks the body with a stack of its own: a hostile body nested a million deep must not overflow the call stack.
 * `mediaAlone`: a media part costs its media and nothing else (a count of what a vendor bills for a well-formed
 * part, for an estimate); the bound leaves it off, so text riding in a media part is counted.
 */
export function measurePrompt(body: unknown, model: string, textCost: TextCost = byteLength, mediaAlone = false): PromptMeasure {
  let tokens = 0;
  let uncountable = false;
  const pending: unknown[] = [body];
  // media payloads already priced as media: the field `key` of `holder` is not counted again
  let payloads: Map<object, string> | undefined;
  while (pending.length > 0) {
    const value = pending.pop();
    tokens += 1;
    if (typeof value === 'string') {
      tokens += textCost(value);
      continue;
    }
    if (value === null || typeof value !== 'object') {
      tokens += scalarCost(value, textCost);
      continue;
    }
    if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
      continue;
    }
    const record = value as Record<string, unknown>;
    const media = mediaCost(record, model);
    if (media !== undefined) {
      if (media.tokens === UNCOUNTABLE) uncountable = true;
      else tokens += media.tokens;
      if (media.payload) (payloads ??= new Map()).set(media.payload.holder, media.payload.key);
      if (mediaAlone) continue;
    }
    const skipped = payloads?.get(record);
    for (const key in record) {
      // a key is a value of its own: one token for what a vendor writes around it (its quotes, its colon)
      tokens += 1 + textCost(key);
      // the payload's place still counts one, as every value does
      if (key === skipped) tokens += 1;
      else pending.push(record[key]);
    }
  }
  return { tokens, uncountable };
}

/** A number, boolean or null: the characters of its JSON form (a number JSON cannot print, as `Infinity`, its longest spelling). */
function scalarCost(value: unknown, textCost: TextCost): number {
  if (typeof value === 'number') return Number.isFinite(value) ? textCost(String(value)) : 9;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null) return 4;
  // undefined, functions, bigints: nothing JSON.parse makes
  return 0;
}

const UNCOUNTABLE = -1;

/** A media part's price, and where its payload sits (that field is priced here, not walked as text). */
interface MediaPrice {
  tokens: number;
  payload?: { holder: object; key: string };
}

/** Where a chat image's URL sits: image_url itself when a string, its url field when an object. */
function imageUrlPlace(part: Record<string, unknown>, image: unknown): { holder: object; key: string } | undefined {
  if (typeof image === 'string') return { holder: part, key: 'image_url' };
  return isObject(image) ? { holder: image, key: 'url' } : undefined;
}

/** OpenAI chat: {type:'image_url', image_url:{url, detail}} or image_url as a string. */
function chatImageCost(part: Record<string, unknown>, model: string): MediaPrice {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : stringField(image, 'url');
  const tokens = imageTokens(model, dataUrlBytes(url), stringField(image, 'detail') ?? stringField(part, 'detail'));
  return { tokens, payload: dataUrlPayload(url, imageUrlPlace(part, image)) };
}

/** OpenAI Responses: {type:'input_image', image_url | file_id, detail}. */
function responsesImageCost(part: Record<string, unknown>, model: string): MediaPrice {
  const url = stringField(part, 'image_url');
  return {
    tokens: imageTokens(model, dataUrlBytes(url), stringField(part, 'detail')),
    payload: dataUrlPayload(url, { holder: part, key: 'image_url' }),
  };
}

/** OpenAI: {type:'input_audio', input_audio:{data, format}}. */
function inputAudioCost(part: Record<string, unknown>): MediaPrice {
  const audio = part.input_audio;
  const data = stringField(audio, 'data');
  return { tokens: audioTokens(data ?? ''), payload: isObject(audio) ? base64Payload(data, { holder: audio, key: 'data' }) : undefined };
}

/** OpenAI files: a PDF's pages cost text and images alike, which the bytes do not tell. */
const fileCost = (): MediaPrice => ({ tokens: UNCOUNTABLE });

/** Anthropic: {type:'image', source:{type:'base64', data} | {type:'url', url} | {type:'file', file_id}}; without a source, Gemini's forms. */
function anthropicImageCost(part: Record<string, unknown>, model: string): MediaPrice | undefined {
  if (!isObject(part.source)) return geminiMediaCost(part, model);
  const source = part.source;
  const base64 = source.type === 'base64' ? stringField(source, 'data') : undefined;
  return { tokens: imageTokens(model, base64Head(base64), undefined), payload: base64Payload(base64, { holder: source, key: 'data' }) };
}

/** Anthropic documents: plain text is text; a PDF, a URL or a file is not counted from here. Without a source, Gemini's forms. */
function anthropicDocumentCost(part: Record<string, unknown>, model: string): MediaPrice | undefined {
  if (!isObject(part.source)) return geminiMediaCost(part, model);
  const source = part.source;
  if (source.type === 'text' || source.type === 'content') return undefined;
  return { tokens: UNCOUNTABLE };
}

/** Gemini's {inlineData:{mimeType, data}} (or inline_data): images and sound by their bytes, text walked as text. */
function inlineDataCost(inline: Record<string, unknown>, model: string): MediaPrice | undefined {
  const mime = (stringField(inline, 'mimeType') ?? stringField(inline, 'mime_type') ?? '').toLowerCase();
  const data = stringField(inline, 'data');
  const payload = base64Payload(data, { holder: inline, key: 'data' });
  if (mime.startsWith('image/')) return { tokens: imageTokens(model, base64Head(data), undefined), payload };
  if (mime.startsWith('audio/') || mime.startsWith('video/')) return { tokens: audioTokens(data ?? ''), payload };
  // text sent as base64 decodes to fewer bytes than its base64: the payload is walked as text
  if (mime.startsWith('text/') || mime === 'application/json') return undefined;
  return { tokens: UNCOUNTABLE };
}

/** Gemini: {inlineData:{mimeType, data}} and {fileData:{fileUri, mimeType}} (or their snake_case spellings). */
function geminiMediaCost(part: Record<string, unknown>, model: string): MediaPrice | undefined {
  const inline = part.inlineData ?? part.inline_data;
  if (isObject(inline)) return inlineDataCost(inline, model);
  const file = part.fileData ?? part.file_data;
  if (
    isObject(file) &&
    (typeof (file as { fileUri?: unknown }).fileUri === 'string' || typeof (file as { file_uri?: unknown }).file_uri === 'string')
  ) {
    const mime = (stringField(file, 'mimeType') ?? stringField(file, 'mime_type') ?? '').toLowerCase();
    return { tokens: mime.startsWith('image/') ? imageTokens(model, undefined, undefined) : UNCOUNTABLE };
  }
  return undefined;
}

/** The media parts that name their kind in `type` (OpenAI's and Anthropic's), each with its price. */
const TYPED_MEDIA = new Map<string, (part: Record<string, unknown>, model: string) => MediaPrice | undefined>([
  ['image_url', chatImageCost],
  ['input_image', responsesImageCost],
  ['input_audio', inputAudioCost],
  ['file', fileCost],
  ['input_file', fileCost],
  ['image', anthropicImageCost],
  ['document', anthropicDocumentCost],
]);

/** What a media part costs (UNCOUNTABLE when the request does not tell), or undefined for an object that is not one. */
function mediaCost(part: Record<string, unknown>, model: string): MediaPrice | undefined {
  const priced = typeof part.type === 'string' ? TYPED_MEDIA.get(part.type) : undefined;
  return priced ? priced(part, model) : geminiMediaCost(part, model);
}

/** A data: URL of base64 is the payload; a link (or a data: URL of anything else) is text like any other (its bytes are counted). */
function dataUrlPayload(url: string | undefined, place: { holder: object; key: string } | undefined) {
  return url !== undefined && url.startsWith('data:') && isBase64(url, url.indexOf(',') + 1) ? place : undefined;
}

/** Base64 data is the payload; anything else in its place (text a vendor could read as text) is walked as text. */
function base64Payload(data: string | undefined, place: { holder: object; key: string }) {
  return data !== undefined && isBase64(data, 0) ? place : undefined;
}

/** Whether `text` from `start` holds only base64 characters (either alphabet, padding and line breaks). */
function isBase64(text: string, start: number): boolean {
  for (let index = start; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const letterOrDigit = (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
    if (!letterOrDigit && code !== 43 && code !== 47 && code !== 61 && code !== 45 && code !== 95 && code !== 10 && code !== 13)
      return false;
  }
  return true;
}

function stringField(value: unknown, field: string): string | undefined {
  if (!isObject(value)) return undefined;
  const found = value[field];
  return typeof found === 'string' ? found : undefined;
}

/**
 * Audio and video by their bytes: the densest vendor rate (Gemini video, 263
 * tokens a second) against the leanest encodings seen (about 6 kbit/s speech,
 * 1 KB of base64 a second) leaves a wide margin at one token per 16 base64 characters.
 */
function audioTokens(base64: string): number {
  return Math.ceil(base64.length / 16) + 1;
}

// ---- images ----

export interface ImageSize {
  width: number;
  height: number;
}

/** Enough of a base64 image to find its size in the header (JPEG's frame header can sit behind a large EXIF block). */
const HEAD_CHARACTERS = 96 * 1024;

function base64Head(data: string | undefined): Buffer | undefined {
  if (!data) return undefined;
  const head = data.length > HEAD_CHARACTERS ? data.slice(0, HEAD_CHARACTERS) : data;
  return Buffer.from(head, 'base64');
}

/** The image bytes of a `data:` URL's head; undefined for a link (its size is unknown until fetched). */
function dataUrlBytes(url: string | undefined): Buffer | undefined {
  if (!url || !url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  return base64Head(url.slice(comma + 1, comma + 1 + HEAD_CHARACTERS));
}

/** Width and height from a PNG, GIF, WebP or JPEG header; undefined when the bytes say neither. */
export function imageSize(bytes: Buffer | undefined): ImageSize | undefined {
  if (!bytes || bytes.length < 24) return undefined;
  // PNG: signature, then the IHDR chunk's width and height
  if (bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString('latin1', 12, 16) === 'IHDR') {
    return sized(bytes.readUInt32BE(16), bytes.readUInt32BE(20));
  }
  const tag = bytes.toString('latin1', 0, 4);
  if (tag === 'GIF8') return sized(bytes.readUInt16LE(6), bytes.readUInt16LE(8));
  if (tag === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP' && bytes.length >= 30) {
    const chunk = bytes.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return sized(1 + bytes.readUIntLE(24, 3), 1 + bytes.readUIntLE(27, 3));
    if (chunk === 'VP8L') {
      const bits = bytes.readUInt32LE(21);
      return sized(1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff));
    }
    if (chunk === 'VP8 ') return sized(bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff);
    return undefined;
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  return undefined;
}

function sized(width: number, height: number): ImageSize | undefined {
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Walks a JPEG's segments to its start-of-frame marker (any SOFn but the DHT, JPG and DAC markers that share the range). */
function jpegSize(bytes: Buffer): ImageSize | undefined {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    const length = bytes.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized(bytes.readUInt16BE(offset + 7), bytes.readUInt16BE(offset + 5));
    }
    offset += 2 + length;
  }
  return undefined;
}

/**
 * What one image costs the model's vendor, as each documents it:
 * - OpenAI's tile models: fit in 2048 x 2048, the short side to 768, then a
 *   base plus a price per 512-pixel tile; `detail: low` is the base alone.
 *   gpt-4o-mini bills the same image at about 33 times the tokens.
 * - OpenAI's patch models (gpt-4.1-mini/nano, o4-mini, gpt-5-mini/nano): one
 *   token per 32-pixel patch, at most 1536, times the model's multiplier.
 * - Claude: width x height / 750 once the long edge fits 1568, at most about 1600.
 * - Gemini: 258 a 768-pixel tile (Gemini 3 at most 1120 an image at high resolution).
 * - Anyone else: one token per 28 x 28 pixels (Qwen-VL's rate, the densest
 *   known), and 16384 (its default ceiling) when the size is unknown.
 */
export function imageTokens(model: string, head: Buffer | undefined, detail: string | undefined): number {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const size = imageSize(head);
  // patch models first: their names share the tile models' prefixes
  const patches = PATCH_MODELS.find((family) => family.match.test(name));
  if (patches) {
    const count = size ? Math.min(1536, Math.ceil(size.width / 32) * Math.ceil(size.height / 32)) : 1536;
    return Math.ceil(count * patches.multiplier);
  }
  const tiles = TILE_MODELS.find((family) => family.match.test(name));
  if (tiles) {
    if (detail === 'low') return tiles.base;
    // at most 8 tiles: 2048 x 768 after the fitting below
    return tiles.base + tiles.tile * (size ? openAiTiles(size) : 8);
  }
  if (name.startsWith('claude')) return size ? Math.min(1600, claudeTokens(size)) : 1600;
  if (name.startsWith('gemini') || name.startsWith('gemma')) {
    return size ? Math.max(1120, 258 * Math.ceil(size.width / 768) * Math.ceil(size.height / 768)) : 258 * 16;
  }
  return size ? Math.ceil((size.width * size.height) / 784) + 2 : 16_384;
}

const TILE_MODELS: ReadonlyArray<{ match: RegExp; base: number; tile: number }> = [
  { match: /^gpt-4o-mini/, base: 2833, tile: 5667 },
  { match: /^(gpt-|chatgpt-|o1|o3|computer-use)/, base: 85, tile: 170 },
];
const PATCH_MODELS: ReadonlyArray<{ match: RegExp; multiplier: number }> = [
  { match: /^gpt-(4\.1|5(\.\d+)?)-nano/, multiplier: 2.46 },
  { match: /^gpt-(4\.1|5(\.\d+)?)-mini/, multiplier: 1.62 },
  { match: /^o4-mini/, multiplier: 1.72 },
];

function openAiTiles(size: ImageSize): number {
  let { width, height } = size;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  width *= fit;
  height *= fit;
  const short = Math.min(width, height);
  if (short > 768) {
    width = (width * 768) / short;
    height = (height * 768) / short;
  }
  return Math.ceil(width / 512) * Math.ceil(height / 512);
}

function claudeTokens(size: ImageSize): number {
  const fit = Math.min(1, 1568 / Math.max(size.width, size.height));
  return Math.ceil((size.width * fit * size.height * fit) / 750);
}
