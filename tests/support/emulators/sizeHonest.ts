// An upstream that bills prompts by their size, honestly but as high as a real
// vendor could. OpenAI's models are billed by OpenAI's own tokenizer over every
// text they receive (keys included, one more token per value around them);
// any other model at a third of a token per byte of text (JSON and code run
// about four bytes a token with real tokenizers; three leaves room). Images
// are billed by the vendor's documented formula from the size in the PNG
// header, or at the vendor's most for one image; audio at ten tokens a second
// of the leanest speech encoding (Gemini's at its 32 a second); the other
// fields of a media part are text like any other, and so is a payload that is
// not base64. A number costs the characters it was written with (a
// 100,000-digit literal is 100,000 digits of prompt). Like a real vendor it refuses a prompt
// longer than the model's context window (each input of a batch on its own,
// and the whole bill at most a window per input).
// It speaks just enough of each vendor's wire format for the relay to bill an
// answer: OpenAI chat, completions, embeddings and Responses, Anthropic
// Messages, and Gemini generateContent, whole answers only; and, billed as
// their vendors bill them (`reported` then holds the vendor's own unit):
// - rerank in Jina's shape: every query-document pair is a prompt of its own,
//   with every option the client added beside them (a reranker that takes an
//   `instruction` reads it once per pair), at a third of a token a byte;
// - speech: the input's characters, and every other field but the voice and
//   format as text tokens (gpt-4o-mini-tts bills its `instructions`);
// - image generations: the images made, `n` of them (and one more than asked,
//   as a careless vendor might send);
// - transcriptions and translations: the audio decoded from the WAV's bytes
//   (the fmt chunk's samples, not its byte-rate field, and the data the file
//   really holds), whisper by the second, the others ten tokens a second plus
//   the form's text fields as prompt.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { listenOnLoopback } from './types';

export interface SizeHonestUpstream {
  baseUrl: string;
  /** The prompt tokens reported for each request, in the order they came. */
  reported: number[];
  close(): Promise<void>;
}

/** What one image of unknown size costs at most, per vendor, as their pages give it (OpenAI's gpt-4o high detail; Claude; Gemini tiles at 3072 x 3072). */
export const VENDOR_IMAGE_TOKENS = { openai: 85 + 8 * 170, anthropic: 1600, gemini: 258 * 16 } as const;

type Vendor = keyof typeof VENDOR_IMAGE_TOKENS;

/** The context windows of the models the tests use (embeddings: each input). */
export const CONTEXT_WINDOWS: Record<string, number> = {
  'gpt-4o': 128_000,
  'gpt-3.5-turbo-instruct': 16_385,
  'text-embedding-3-small': 8_191,
  'claude-sonnet-4-5': 200_000,
  'gemini-2.5-flash': 1_048_576,
};

function pngSize(base64: string | undefined): { width: number; height: number } | undefined {
  if (!base64) return undefined;
  const head = Buffer.from(base64.slice(0, 64), 'base64');
  if (head.length < 24 || head.readUInt32BE(0) !== 0x89504e47) return undefined;
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
}

/** The vendor's price of one image, from its size when the PNG header gives it. */
function imagePrice(vendor: Vendor, size: { width: number; height: number } | undefined, detail: unknown): number {
  if (vendor === 'openai' && detail === 'low') return 85;
  if (!size) return VENDOR_IMAGE_TOKENS[vendor];
  if (vendor === 'openai') {
    const fit = Math.min(1, 2048 / Math.max(size.width, size.height));
    let [width, height] = [size.width * fit, size.height * fit];
    const short = Math.min(width, height);
    if (short > 768) [width, height] = [(width * 768) / short, (height * 768) / short];
    return 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512);
  }
  if (vendor === 'anthropic') return Math.min(1600, Math.ceil((size.width * size.height) / 750));
  return 258 * Math.ceil(size.width / 768) * Math.ceil(size.height / 768);
}

/** Whether a payload is base64 (a vendor decodes it as media; anything else in its place it could only read as text). */
const isBase64 = (data: unknown): data is string => typeof data === 'string' && /^[A-Za-z0-9+/=_\-\r\n]*$/.test(data);

/** A Gemini inline audio part's base64 data. */
function inlineAudio(record: Record<string, unknown>): string | undefined {
  const inline = record.inlineData as { mimeType?: string; data?: string } | undefined;
  return typeof inline?.mimeType === 'string' && inline.mimeType.startsWith('audio/') && isBase64(inline.data) ? inline.data : undefined;
}

function imageOf(record: Record<string, unknown>): { data?: string; detail?: unknown } | undefined {
  const fromUrl = (url: unknown) =>
    typeof url === 'string' && url.startsWith('data:') && isBase64(url.slice(url.indexOf(',') + 1))
      ? url.slice(url.indexOf(',') + 1)
      : undefined;
  if (record.type === 'image_url') {
    const image = record.image_url as { url?: string; detail?: string } | string;
    return typeof image === 'string' ? { data: fromUrl(image) } : { data: fromUrl(image?.url), detail: image?.detail };
  }
  if (record.type === 'input_image') return { data: fromUrl(record.image_url), detail: record.detail };
  if (record.type === 'image' && record.source && isBase64((record.source as { data?: string }).data))
    return { data: (record.source as { data?: string }).data };
  const inline = record.inlineData as { mimeType?: string; data?: string } | undefined;
  if (typeof inline?.mimeType === 'string' && inline.mimeType.startsWith('image/') && isBase64(inline.data)) return { data: inline.data };
  return undefined;
}

/** The characters of every number literal in JSON `text` (outside strings): what a vendor that renders numbers as written reads. */
export function numberLiteralCharacters(text: string): number {
  let total = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92) index += 1;
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if ((code >= 48 && code <= 57) || code === 45 || code === 43 || code === 46 || code === 101 || code === 69) total += 1;
  }
  return total;
}

/**
 * The characters of the numbers of a request as it was written (`raw`), but
 * for the token ids of a completions prompt or an embeddings input: a vendor
 * reads those as one token each, and renders every other number as written.
 */
export function honestNumberCharacters(path: string, body: Record<string, unknown>, raw: string): number {
  const tokenIds = path.endsWith('/embeddings')
    ? body.input
    : path.endsWith('/completions') && !path.endsWith('/chat/completions')
      ? body.prompt
      : undefined;
  return numberLiteralCharacters(raw) - (tokenIds === undefined ? 0 : numberLiteralCharacters(JSON.stringify(tokenIds)));
}

/** The tokens this upstream bills for a request body, for a model of `vendor` (numbers at one token each: `numberCharacters` adds their characters, honestNumberCharacters). */
export function honestPromptTokens(body: unknown, vendor: Vendor, model = '', numberCharacters = 0): number {
  const openAiModel = /^(gpt-|text-)/.test(model);
  let text = 0;
  let media = 0;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      text += openAiModel ? countTokens(value) + 1 : Buffer.byteLength(value) / 3;
      return;
    }
    if (typeof value === 'number') {
      // a token id in a prompt array
      text += 1;
      return;
    }
    if (!value || typeof value !== 'object') return;
    if (openAiModel) text += 1;
    if (Array.isArray(value)) return value.forEach(visit);
    const record = value as Record<string, unknown>;
    // a media payload is billed as media; every other field of its part is text
    let payload: string | undefined;
    const image = imageOf(record);
    if (image) {
      media += imagePrice(vendor, pngSize(image.data), image.detail);
      payload = image.data;
    } else if (record.type === 'input_audio' && isBase64((record.input_audio as { data?: string } | undefined)?.data)) {
      // about ten tokens a second, and a second of the leanest speech encoding is over 700 bytes
      const data = (record.input_audio as { data: string }).data;
      media += Math.ceil((data.length / 700) * 10);
      payload = data;
    } else if (inlineAudio(record) !== undefined) {
      // Gemini: 32 tokens a second, of at least 700 bytes (933 base64 characters)
      const data = inlineAudio(record)!;
      media += Math.ceil((data.length / 933) * 32);
      payload = data;
    }
    const visitExceptPayload = (value: unknown): void => {
      if (payload !== undefined && typeof value === 'string' && (value === payload || value.endsWith(`,${payload}`))) return;
      if (value && typeof value === 'object' && !Array.isArray(value) && payload !== undefined) {
        for (const [key, item] of Object.entries(value)) {
          visit(key);
          visitExceptPayload(item);
        }
        return;
      }
      visit(value);
    };
    for (const [key, item] of Object.entries(record)) {
      if (key === 'model' || key === 'max_tokens' || key === 'stream') continue;
      visit(key);
      visitExceptPayload(item);
    }
  };
  visit(body);
  return Math.ceil(text) + media + numberCharacters;
}

/** The inputs of an embeddings or completions batch, each a prompt of its own with a window of its own; undefined for one prompt. */
function batchOf(path: string, body: Record<string, unknown>): unknown[] | undefined {
  const batch = path.endsWith('/embeddings')
    ? body.input
    : path.endsWith('/completions') && !path.endsWith('/chat/completions')
      ? body.prompt
      : undefined;
  return Array.isArray(batch) && batch.length > 0 && (typeof batch[0] === 'string' || Array.isArray(batch[0])) ? batch : undefined;
}

/** Whether a request's prompt fits the model's window: each input of a batch its own, and the whole bill at most a window per input. */
function fitsWindow(path: string, body: Record<string, unknown>, vendor: Vendor, model: string, prompt: number): boolean {
  const window = CONTEXT_WINDOWS[model] ?? Infinity;
  const batch = batchOf(path, body);
  if (!batch) return prompt <= window;
  return prompt <= window * batch.length && batch.every((item) => honestPromptTokens(item, vendor, model) <= window);
}

export async function startSizeHonestUpstream(): Promise<SizeHonestUpstream> {
  const reported: number[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '').split('?')[0];
      if (path === '/v1/audio/transcriptions' || path === '/v1/audio/translations') {
        const billed = transcriptionBill(Buffer.concat(chunks), request.headers['content-type'] ?? '');
        if (!billed) {
          response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"could not read the upload"}}');
          return;
        }
        reported.push(billed.prompt);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(billed.answer));
        return;
      }
      let body: Record<string, unknown>;
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
        return;
      }
      const other = otherOperation(path, body);
      if (other) {
        reported.push(other.billed);
        response.writeHead(200, { 'content-type': other.contentType });
        response.end(other.answer);
        return;
      }
      const vendor: Vendor = path.startsWith('/v1/messages') ? 'anthropic' : path.includes(':generateContent') ? 'gemini' : 'openai';
      const model = typeof body.model === 'string' ? body.model : (/models\/([^/:]+):/.exec(path)?.[1] ?? '');
      const prompt = honestPromptTokens(body, vendor, model, honestNumberCharacters(path, body, raw));
      if (!fitsWindow(path, body, vendor, model, prompt)) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            error: {
              message: `this model's maximum context length is ${CONTEXT_WINDOWS[model]} tokens`,
              type: 'invalid_request_error',
              code: 'context_length_exceeded',
            },
          }),
        );
        return;
      }
      reported.push(prompt);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answerFor(path, body, prompt)));
    });
  });
  const listening = await listenOnLoopback(server);
  return { baseUrl: listening.baseUrl, reported, close: () => listening.close() };
}

/** What it bills for the answer: every candidate it generates (n, best_of, candidateCount) at the full limit asked, else one token. */
function outputTokens(body: Record<string, unknown>): number {
  const config = (body.generationConfig ?? {}) as Record<string, unknown>;
  const whole = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0);
  const limit =
    whole(body.max_tokens) || whole(body.max_completion_tokens) || whole(body.max_output_tokens) || whole(config.maxOutputTokens) || 1;
  return limit * Math.max(1, whole(body.n), whole(body.best_of), whole(config.candidateCount));
}

function answerFor(path: string, body: Record<string, unknown>, prompt: number): unknown {
  const model = typeof body.model === 'string' ? body.model : 'model';
  const output = outputTokens(body);
  if (path.endsWith('/chat/completions')) {
    return {
      id: 'chatcmpl-honest',
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output },
    };
  }
  if (path.endsWith('/completions')) {
    return {
      id: 'cmpl-honest',
      object: 'text_completion',
      created: 1,
      model,
      choices: [{ index: 0, text: 'ok', finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output },
    };
  }
  if (path.endsWith('/embeddings')) {
    const inputs = Array.isArray(body.input) ? body.input.length : 1;
    return {
      object: 'list',
      model,
      data: Array.from({ length: inputs }, (_, index) => ({ object: 'embedding', index, embedding: [0.5, 0.25] })),
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    };
  }
  if (path.endsWith('/responses')) {
    return {
      id: 'resp_honest',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model,
      output: [
        {
          type: 'message',
          id: 'msg_honest',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'ok', annotations: [] }],
        },
      ],
      usage: { input_tokens: prompt, output_tokens: output, total_tokens: prompt + output },
    };
  }
  if (path.startsWith('/v1/messages')) {
    return {
      id: 'msg_honest',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: prompt, output_tokens: output },
    };
  }
  return {
    candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: output, totalTokenCount: prompt + output },
  };
}

/** The fields of a rerank or speech body that are its vendor's own (every other one the vendor may read as text). */
const RERANK_FIELDS = new Set(['model', 'query', 'documents', 'top_n', 'return_documents']);
const SPEECH_FIELDS = new Set(['model', 'input', 'voice', 'response_format', 'speed', 'stream_format']);

/** Rerank, speech and image generations: what the vendor bills (in its unit) and its answer; undefined for the text operations. */
function otherOperation(path: string, body: Record<string, unknown>): { billed: number; contentType: string; answer: string } | undefined {
  const model = typeof body.model === 'string' ? body.model : '';
  const rest = (known: Set<string>) => Object.fromEntries(Object.entries(body).filter(([key]) => !known.has(key)));
  if (path === '/v1/rerank') {
    const documents = Array.isArray(body.documents) ? body.documents : [];
    const options = rest(RERANK_FIELDS);
    let tokens = 0;
    for (const document of documents) tokens += honestPromptTokens({ query: body.query, document, ...options }, 'openai', model);
    const results = documents.map((_document, index) => ({ index, relevance_score: 1 / (index + 1) }));
    return {
      billed: tokens,
      contentType: 'application/json',
      answer: JSON.stringify({ model, usage: { total_tokens: tokens, prompt_tokens: tokens }, results }),
    };
  }
  if (path === '/v1/audio/speech') {
    const characters = typeof body.input === 'string' ? [...body.input].length : 0;
    const options = rest(SPEECH_FIELDS);
    const billed = characters + (Object.keys(options).length > 0 ? honestPromptTokens(options, 'openai', model) : 0);
    return { billed, contentType: 'audio/mpeg', answer: 'ID3 honest audio' };
  }
  if (path === '/v1/images/generations') {
    const asked = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
    const data = Array.from({ length: asked + 1 }, () => ({ url: 'https://images.invalid/honest.png' }));
    return { billed: asked, contentType: 'application/json', answer: JSON.stringify({ created: 1, data }) };
  }
  return undefined;
}

/** The named fields and files of a multipart form. */
function multipartParts(upload: Buffer, contentType: string): Array<{ name: string; file: boolean; value: Buffer }> | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) return undefined;
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: Array<{ name: string; file: boolean; value: Buffer }> = [];
  let start = upload.indexOf(marker);
  while (start >= 0) {
    const headerStart = start + marker.length + 2;
    const next = upload.indexOf(marker, headerStart);
    if (next < 0) break;
    const headerEnd = upload.indexOf('\r\n\r\n', headerStart);
    if (headerEnd < 0 || headerEnd > next) break;
    const headers = upload.toString('latin1', headerStart, headerEnd);
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    parts.push({ name, file: /filename=/.test(headers), value: upload.subarray(headerEnd + 4, next - 2) });
    start = next;
  }
  return parts;
}

/** The seconds a decoder plays of a PCM WAV: the first data chunk, as much of it as the file holds, at the rate its samples have. */
function decodedWavSeconds(file: Buffer): number | undefined {
  if (file.length < 12 || file.toString('latin1', 0, 4) !== 'RIFF') return undefined;
  let offset = 12;
  let rate = 0;
  while (offset + 8 <= file.length) {
    const id = file.toString('latin1', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= file.length)
      rate = file.readUInt32LE(body + 4) * file.readUInt16LE(body + 2) * Math.ceil(file.readUInt16LE(body + 14) / 8);
    if (id === 'data') {
      if (!(rate > 0)) return undefined;
      const available = file.length - body;
      return (size === 0 || size === 0xffffffff ? available : Math.min(size, available)) / rate;
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

/** A transcription as its vendor bills it: whisper the decoded seconds (rounded up), the others ten audio tokens a second and the form's text. */
function transcriptionBill(upload: Buffer, contentType: string): { prompt: number; answer: unknown } | undefined {
  const parts = multipartParts(upload, contentType);
  const model =
    parts
      ?.find((part) => part.name === 'model')
      ?.value.toString('utf8')
      .trim() ?? '';
  const files = parts?.filter((part) => part.file) ?? [];
  if (!model || files.length === 0) return undefined;
  const seconds = Math.max(...files.map((file) => decodedWavSeconds(file.value) ?? file.value.length / 700));
  if (model.startsWith('whisper')) {
    const billed = Math.max(1, Math.ceil(seconds));
    return { prompt: billed, answer: { text: 'ok', usage: { type: 'duration', seconds: billed } } };
  }
  const fields = (parts ?? []).filter((part) => !part.file && part.name !== 'model');
  const text = fields.reduce((sum, part) => sum + honestPromptTokens({ [part.name]: part.value.toString('utf8') }, 'openai', model), 0);
  const prompt = Math.ceil(seconds * 10) + text;
  return { prompt, answer: { text: 'ok', usage: { type: 'tokens', input_tokens: prompt, output_tokens: 2, total_tokens: prompt + 2 } } };
}
