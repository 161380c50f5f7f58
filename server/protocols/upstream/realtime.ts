// OpenAI's Realtime API over a WebSocket, as OpenAI and Azure serve it: where
// a session is opened and what its events say about usage. Pure: the relay
// (server/relay/realtime.ts) does the I/O and passes every frame unchanged.
// References: https://platform.openai.com/docs/api-reference/realtime and
// https://learn.microsoft.com/azure/ai-services/openai/realtime-audio-reference
//
// OpenAI: wss://api.openai.com/v1/realtime?model=<model>, `Authorization:
// Bearer <key>` and `OpenAI-Beta: realtime=v1`. Azure:
// wss://<resource>/openai/realtime?api-version=<version>&deployment=<deployment>
// with `api-key`. A channel's base URL is turned into a WebSocket URL (http:
// to ws:, https: to wss:), which is how tests point it at a local emulator.
import { findChannelType, openAiPathPrefix } from '../../../common/channelTypes';
import { count, upstreamFailure } from '../shared';
import type { ChannelConfig, HttpTarget, UpstreamFailure } from '../types';
import { adaptorForChannelType } from '.';
import { azureDeployment } from './azure';
import { baseUrlOf, openAiAuthHeader } from './openai';

/** Azure's realtime api-version when the client sends none (the channel's `other` is its chat version). */
export const AZURE_REALTIME_API_VERSION = '2024-10-01-preview';

/** Whether a channel of this type may be asked for a realtime session: its adaptor offers it and its row says the vendor serves it. */
export function servesRealtime(channelType: number): boolean {
  return adaptorForChannelType(channelType)?.operations.has('realtime') === true && findChannelType(channelType)?.realtime === true;
}

/** The WebSocket URL of an http(s) base URL. */
function webSocketBase(base: string): string {
  return base.replace(/^http(s?):\/\//i, (_match, secure: string) => (secure ? 'wss://' : 'ws://'));
}

/**
 * Where to open a session with this channel for `model` (the name the channel
 * expects, after its model mapping), or why it cannot be opened.
 */
/** Whether a client speaks the beta Realtime protocol: `OpenAI-Beta: realtime=v1`, or a browser's `openai-beta.realtime-v1` subprotocol. */
export function speaksRealtimeBeta(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const beta = headers['openai-beta'];
  const protocols = headers['sec-websocket-protocol'];
  return (
    (typeof beta === 'string' && beta.split(',').some((item) => item.trim() === 'realtime=v1')) ||
    (typeof protocols === 'string' && protocols.split(',').some((item) => item.trim() === 'openai-beta.realtime-v1'))
  );
}

/** Where a session opens; `beta`: the client speaks the beta protocol, so the upstream is asked for it (a GA client gets a GA session). */
export function realtimeTarget(
  channel: ChannelConfig,
  model: string,
  query: Readonly<Record<string, string>> = {},
  beta = true,
): HttpTarget | UpstreamFailure {
  const base = baseUrlOf(channel);
  const row = findChannelType(channel.type);
  if (!base) return upstreamFailure(500, 'this channel has no base URL', { code: 'channel_base_url_missing', retryable: true });
  if (row?.protocol === 'azure') {
    const version = query['api-version'] || AZURE_REALTIME_API_VERSION;
    const url = `${webSocketBase(base)}/openai/realtime?api-version=${encodeURIComponent(version)}&deployment=${encodeURIComponent(azureDeployment(model))}`;
    return { url, method: 'GET', headers: { 'api-key': channel.key } };
  }
  const prefix = openAiPathPrefix(channel.type, channel.other, channel.baseUrl) ?? '/v1';
  return {
    url: `${webSocketBase(base)}${prefix}/realtime?model=${encodeURIComponent(model)}`,
    method: 'GET',
    headers: beta ? { ...openAiAuthHeader(row, channel.key), 'openai-beta': 'realtime=v1' } : openAiAuthHeader(row, channel.key),
  };
}

/** One response's usage, as `response.done` reports it (`response.usage`). */
export interface RealtimeUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input text tokens, cached ones included (what is not audio: image tokens count here too). */
  textInputTokens: number;
  audioInputTokens: number;
  cachedTextInputTokens: number;
  cachedAudioInputTokens: number;
  textOutputTokens: number;
  audioOutputTokens: number;
}

type Details = Record<string, unknown> | undefined;
const detailsOf = (value: unknown): Details => (value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined);

/**
 * The usage of a `response.done` event's response; zeros when it has none (a
 * response cancelled before it began). Input that is not audio is text; output
 * that is not audio is text. Cached tokens are split by
 * `cached_tokens_details` when given, else counted as text first (cached
 * text and cached audio cost alike at OpenAI).
 */
export function realtimeUsage(response: unknown): RealtimeUsage {
  const usage = detailsOf(detailsOf(response)?.usage);
  const input = detailsOf(usage?.input_token_details);
  const output = detailsOf(usage?.output_token_details);
  const audioInput = count(input?.audio_tokens);
  const inputTokens = Math.max(count(usage?.input_tokens), audioInput + count(input?.text_tokens));
  const audioOutput = count(output?.audio_tokens);
  const outputTokens = Math.max(count(usage?.output_tokens), audioOutput + count(output?.text_tokens));
  const textInput = inputTokens - audioInput;
  const cached = Math.min(count(input?.cached_tokens), inputTokens);
  const cachedDetails = detailsOf(input?.cached_tokens_details);
  // without the split, cached tokens are read as text first; with it, what is not audio is text (images included)
  const cachedAudio = cachedDetails
    ? Math.min(count(cachedDetails.audio_tokens), audioInput, cached)
    : Math.max(0, Math.min(cached - Math.min(cached, textInput), audioInput));
  const cachedText = Math.min(cached - cachedAudio, textInput);
  return {
    inputTokens,
    outputTokens,
    textInputTokens: textInput,
    audioInputTokens: audioInput,
    cachedTextInputTokens: cachedText,
    cachedAudioInputTokens: cachedAudio,
    textOutputTokens: outputTokens - audioOutput,
    audioOutputTokens: audioOutput,
  };
}

/**
 * Audio tokens per second of audio, as OpenAI documents them for the Realtime API
 * (https://platform.openai.com/docs/guides/realtime-costs: "Audio tokens in user messages are 1 token per 100 ms
 * of audio, while audio tokens in assistant messages are 1 token per 50ms"). The relay uses them only for a
 * response whose usage never came (a cut-off response), to turn the audio that passed into tokens.
 */
export const REALTIME_AUDIO_TOKENS_PER_SECOND = { input: 10, output: 20 } as const;

/** PCM16 at 24 kHz, mono: the Realtime API's default audio format, in bytes per second. */
const PCM16_BYTES_PER_SECOND = 48_000;

/**
 * Bytes a second of the session's audio takes, one way: the beta's `input_audio_format` /
 * `output_audio_format` ("pcm16", "g711_ulaw", "g711_alaw") or the GA's `audio.<direction>.format`
 * (`{ type: "audio/pcm", rate }`, "audio/pcmu", "audio/pcma"). G.711 is 8 kHz, one byte a sample.
 */
export function audioBytesPerSecond(session: unknown, direction: 'input' | 'output'): number {
  const fields = detailsOf(session);
  const format = detailsOf(detailsOf(fields?.audio)?.[direction])?.format ?? fields?.[`${direction}_audio_format`];
  const type = typeof format === 'string' ? format : detailsOf(format)?.type;
  if (typeof type !== 'string') return PCM16_BYTES_PER_SECOND;
  if (/g711|pcmu|pcma/.test(type)) return 8_000;
  const rate = detailsOf(format)?.rate;
  return (typeof rate === 'number' && rate > 0 ? rate : 24_000) * 2;
}

/** Whether a session event says something about the audio formats (a session.update may leave them as they were). */
export function namesAudioFormat(session: unknown, direction: 'input' | 'output'): boolean {
  const fields = detailsOf(session);
  return fields?.[`${direction}_audio_format`] !== undefined || detailsOf(detailsOf(fields?.audio)?.[direction])?.format !== undefined;
}

/** Where a JSON string value starts and ends in a frame (its quotes excluded), found without parsing the frame. */
function stringValueSpan(frame: Buffer, key: string): { start: number; end: number } | undefined {
  const quotedKey = `"${key}"`;
  for (let at = frame.indexOf(quotedKey); at !== -1; at = frame.indexOf(quotedKey, at + 1)) {
    let index = at + quotedKey.length;
    while (index < frame.length && (frame[index] === 0x20 || frame[index] === 0x0a || frame[index] === 0x0d || frame[index] === 0x09))
      index += 1;
    if (frame[index] !== 0x3a) continue; // ':' - else the key's name was a string value
    index += 1;
    while (index < frame.length && (frame[index] === 0x20 || frame[index] === 0x0a || frame[index] === 0x0d || frame[index] === 0x09))
      index += 1;
    if (frame[index] !== 0x22) return undefined; // '"' - not a string
    const end = frame.indexOf(0x22, index + 1);
    return end === -1 ? undefined : { start: index + 1, end };
  }
  return undefined;
}

/** Bytes that base64 text between two offsets decodes to (JSON's escaped slashes and padding left out). */
function base64Bytes(frame: Buffer, start: number, end: number): number {
  let characters = 0;
  for (let index = start; index < end; index += 1) {
    const byte = frame[index];
    if (byte !== 0x5c && byte !== 0x3d && byte !== 0x20 && byte !== 0x0a && byte !== 0x0d) characters += 1; // not '\', '=', whitespace
  }
  return Math.floor((characters * 3) / 4);
}

/**
 * A frame with one large base64 string taken out, parsed, and the decoded size of that string: audio frames
 * are mostly their audio, which is measured, never decoded or parsed.
 */
function parseWithoutBase64(frame: Buffer, key: string): { event: Record<string, unknown>; bytes: number } | undefined {
  const span = stringValueSpan(frame, key);
  if (!span) return undefined;
  try {
    const event: unknown = JSON.parse(Buffer.concat([frame.subarray(0, span.start), frame.subarray(span.end)]).toString('utf8'));
    return event && typeof event === 'object'
      ? { event: event as Record<string, unknown>, bytes: base64Bytes(frame, span.start, span.end) }
      : undefined;
  } catch {
    return undefined;
  }
}

/** An id or index as text; '' for anything else. */
const scalar = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');

const TEXT_DELTAS = [
  'response.text.delta',
  'response.output_text.delta',
  'response.audio_transcript.delta',
  'response.output_audio_transcript.delta',
  'response.function_call_arguments.delta',
];
const AUDIO_DELTAS = ['response.audio.delta', 'response.output_audio.delta'];

/** What one output delta of a response carries: text (a text, transcript or function-call delta) or audio bytes. */
export interface RealtimeOutputDelta {
  responseId: string;
  /** The output item (and content part) it adds to. */
  part: string;
  text?: string;
  audioBytes?: number;
}

/** A server frame's output delta (beta and GA names), or undefined for any other frame. Audio is measured, not decoded. */
export function realtimeOutputDelta(frame: Buffer): RealtimeOutputDelta | undefined {
  if (!frame.includes('.delta"')) return undefined;
  const read = (event: Record<string, unknown>) => ({
    responseId: typeof event.response_id === 'string' ? event.response_id : '',
    part: `${scalar(event.item_id)}:${scalar(event.content_index ?? event.output_index)}`,
  });
  if (AUDIO_DELTAS.some((type) => frame.includes(`"${type}"`))) {
    const parsed = parseWithoutBase64(frame, 'delta');
    if (!parsed || !AUDIO_DELTAS.includes(String(parsed.event.type))) return undefined;
    return { ...read(parsed.event), audioBytes: parsed.bytes };
  }
  if (!TEXT_DELTAS.some((type) => frame.includes(`"${type}"`))) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(frame.toString('utf8'));
  } catch {
    return undefined;
  }
  const fields = detailsOf(event);
  if (!fields || !TEXT_DELTAS.includes(String(fields.type)) || typeof fields.delta !== 'string') return undefined;
  return { ...read(fields), text: fields.delta };
}

/** What a client frame adds to the conversation, as the gateway counts it: text, and audio bytes (appended to the buffer, or in an item). */
export interface RealtimeClientInput {
  /** `input_audio_buffer.append`: bytes added to the input buffer (they join the conversation when it is committed). */
  bufferedAudioBytes?: number;
  /** `conversation.item.create`: the item's text (text parts, transcripts, a function call's arguments or output). */
  texts?: string[];
  /** `conversation.item.create`: audio bytes in the item's `input_audio` parts. */
  itemAudioBytes?: number;
}

/** The text of a conversation item, part by part. */
function itemTexts(item: Record<string, unknown>): string[] {
  const texts: string[] = [];
  for (const field of ['arguments', 'output', 'name']) if (typeof item[field] === 'string' && item[field]) texts.push(item[field]);
  if (Array.isArray(item.content)) {
    for (const part of item.content) {
      const fields = detailsOf(part);
      if (typeof fields?.text === 'string' && fields.text) texts.push(fields.text);
      // an audio part is counted as its audio; a transcript stands for audio only where none is given
      else if (typeof fields?.transcript === 'string' && fields.transcript && typeof fields.audio !== 'string')
        texts.push(fields.transcript);
    }
  }
  return texts;
}

/** A client frame's addition to the conversation, or undefined for a frame that adds none the gateway counts. */
export function realtimeClientInput(frame: Buffer): RealtimeClientInput | undefined {
  if (frame.includes('"input_audio_buffer.append"')) {
    const parsed = parseWithoutBase64(frame, 'audio');
    return parsed?.event.type === 'input_audio_buffer.append' ? { bufferedAudioBytes: parsed.bytes } : undefined;
  }
  if (!frame.includes('"conversation.item.create"')) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(frame.toString('utf8'));
  } catch {
    return undefined;
  }
  const fields = detailsOf(event);
  const item = detailsOf(fields?.item);
  if (fields?.type !== 'conversation.item.create' || !item) return undefined;
  let itemAudioBytes = 0;
  if (Array.isArray(item.content)) {
    for (const part of item.content) {
      const audio = detailsOf(part)?.audio;
      if (typeof audio === 'string') itemAudioBytes += Buffer.byteLength(audio, 'base64');
    }
  }
  return { texts: itemTexts(item), itemAudioBytes };
}

/** The event types the relay reads; every other frame passes unread. */
export type WatchedServerEvent =
  | 'session.created'
  | 'session.updated'
  | 'response.created'
  | 'response.done'
  | 'error'
  | 'input_audio_buffer.committed'
  | 'input_audio_buffer.cleared';
export type WatchedClientEvent = 'response.create';

const SERVER_MARKS: ReadonlyArray<readonly [string, WatchedServerEvent]> = [
  ['"response.done"', 'response.done'],
  ['"response.created"', 'response.created'],
  ['"error"', 'error'],
  ['"session.created"', 'session.created'],
  ['"session.updated"', 'session.updated'],
  ['"input_audio_buffer.committed"', 'input_audio_buffer.committed'],
  ['"input_audio_buffer.cleared"', 'input_audio_buffer.cleared'],
];
const CLIENT_MARKS: ReadonlyArray<readonly [string, WatchedClientEvent]> = [['"response.create"', 'response.create']];

/**
 * A text frame's event when it is one the relay reads: the frame is parsed
 * only when its bytes name such a type (audio deltas, most of the traffic,
 * are searched, never parsed). Undefined for anything else or for bad JSON.
 */
function watched<Type extends string>(
  frame: Buffer,
  marks: ReadonlyArray<readonly [string, Type]>,
): { type: Type; event: Record<string, unknown> } | undefined {
  if (!marks.some(([mark]) => frame.includes(mark))) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(frame.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!event || typeof event !== 'object') return undefined;
  const type = (event as { type?: unknown }).type;
  const found = marks.find(([, name]) => name === type);
  return found ? { type: found[1], event: event as Record<string, unknown> } : undefined;
}

export const watchedServerEvent = (frame: Buffer) => watched(frame, SERVER_MARKS);
export const watchedClientEvent = (frame: Buffer) => watched(frame, CLIENT_MARKS);

/** A response's output limit as an event gives it (`max_output_tokens` or `max_response_output_tokens`): a number, or undefined for "inf" or none. */
export function outputLimitOf(fields: unknown): number | undefined {
  const record = detailsOf(fields);
  const limit = record?.max_output_tokens ?? record?.max_response_output_tokens;
  return typeof limit === 'number' && Number.isFinite(limit) && limit > 0 ? Math.floor(limit) : undefined;
}

/** The error event the relay sends the client, in the Realtime API's shape. */
export function realtimeErrorEvent(code: string, message: string, eventId?: string): string {
  return JSON.stringify({
    type: 'error',
    event_id: `event_gw_${Date.now().toString(36)}`,
    error: {
      type: code === 'insufficient_quota' ? 'insufficient_quota' : 'invalid_request_error',
      code,
      message,
      param: null,
      event_id: eventId ?? null,
    },
  });
}

export type { UpstreamFailure };
