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
export function realtimeTarget(channel: ChannelConfig, model: string, query: Readonly<Record<string, string>> = {}): HttpTarget | UpstreamFailure {
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
    headers: { ...openAiAuthHeader(row, channel.key), 'openai-beta': 'realtime=v1' },
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
  const cachedAudio = cachedDetails ? Math.min(count(cachedDetails.audio_tokens), audioInput, cached) : Math.max(0, Math.min(cached - Math.min(cached, textInput), audioInput));
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

/** The event types the relay reads; every other frame passes unread. */
export type WatchedServerEvent = 'session.created' | 'session.updated' | 'response.created' | 'response.done' | 'error';
export type WatchedClientEvent = 'response.create';

const SERVER_MARKS: ReadonlyArray<readonly [string, WatchedServerEvent]> = [
  ['"response.done"', 'response.done'],
  ['"response.created"', 'response.created'],
  ['"error"', 'error'],
  ['"session.created"', 'session.created'],
  ['"session.updated"', 'session.updated'],
];
const CLIENT_MARKS: ReadonlyArray<readonly [string, WatchedClientEvent]> = [['"response.create"', 'response.create']];

/**
 * A text frame's event when it is one the relay reads: the frame is parsed
 * only when its bytes name such a type (audio deltas, most of the traffic,
 * are searched, never parsed). Undefined for anything else or for bad JSON.
 */
function watched<Type extends string>(frame: Buffer, marks: ReadonlyArray<readonly [string, Type]>): { type: Type; event: Record<string, unknown> } | undefined {
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
    error: { type: code === 'insufficient_quota' ? 'insufficient_quota' : 'invalid_request_error', code, message, param: null, event_id: eventId ?? null },
  });
}

export type { UpstreamFailure };
