// The pure side of the Realtime relay: where a session is opened per channel
// type, how response.done's usage is read, which frames are read at all, and
// what a response costs with text and audio priced apart.
import { describe, expect, it } from 'vitest';
import { catalogPrice } from '../../../server/billing/catalog';
import { realtimeBound, realtimeCharge, realtimeRatios } from '../../../server/billing/realtimePrices';
import {
  audioBytesPerSecond,
  namesAudioFormat,
  outputLimitOf,
  realtimeClientInput,
  realtimeOutputDelta,
  realtimeTarget,
  realtimeUsage,
  servesRealtime,
  watchedClientEvent,
  watchedServerEvent,
} from '../../../server/protocols/upstream/realtime';

const channel = (type: number, baseUrl: string, key = 'sk-upstream') => ({ type, key, baseUrl, other: '' });

describe('realtimeTarget', () => {
  it("opens OpenAI's session at its default host over wss with the bearer key and the beta header", () => {
    expect(realtimeTarget(channel(1, ''), 'gpt-4o-realtime-preview')).toEqual({
      url: 'wss://api.openai.com/v1/realtime?model=gpt-4o-realtime-preview',
      method: 'GET',
      headers: { authorization: 'Bearer sk-upstream', 'openai-beta': 'realtime=v1' },
    });
  });

  it('turns an http base URL into ws and keeps its port', () => {
    expect(realtimeTarget(channel(8, 'http://127.0.0.1:4567/'), 'gpt-realtime')).toMatchObject({
      url: 'ws://127.0.0.1:4567/v1/realtime?model=gpt-realtime',
    });
  });

  it("opens Azure's at the deployment with api-key, the client's api-version first", () => {
    const azure = { type: 3, key: 'azure-key', baseUrl: 'https://example.openai.azure.com', other: '2024-06-01' };
    expect(realtimeTarget(azure, 'gpt-4o-realtime-preview')).toEqual({
      url: 'wss://example.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime-preview',
      method: 'GET',
      headers: { 'api-key': 'azure-key' },
    });
    expect(realtimeTarget(azure, 'gpt-4o-mini-realtime-preview', { 'api-version': '2025-04-01-preview' })).toMatchObject({
      url: 'wss://example.openai.azure.com/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o-mini-realtime-preview',
    });
  });

  it('fails clearly for a channel without a base URL', () => {
    expect(realtimeTarget(channel(3, ''), 'gpt-4o-realtime-preview')).toMatchObject({ code: 'channel_base_url_missing', retryable: true });
  });
});

describe('servesRealtime', () => {
  it('is true for OpenAI, Azure and Custom, false for other OpenAI-wire vendors and other protocols', () => {
    expect([1, 3, 8].map(servesRealtime)).toEqual([true, true, true]);
    expect([2, 14, 24, 29].map(servesRealtime)).toEqual([false, false, false, false]);
  });
});

describe('realtimeUsage', () => {
  it("reads response.done's usage with its cached split", () => {
    const usage = realtimeUsage({
      usage: {
        total_tokens: 360,
        input_tokens: 160,
        output_tokens: 200,
        input_token_details: {
          cached_tokens: 64,
          text_tokens: 100,
          audio_tokens: 60,
          cached_tokens_details: { text_tokens: 40, audio_tokens: 24 },
        },
        output_token_details: { text_tokens: 30, audio_tokens: 170 },
      },
    });
    expect(usage).toEqual({
      inputTokens: 160,
      outputTokens: 200,
      textInputTokens: 100,
      audioInputTokens: 60,
      cachedTextInputTokens: 40,
      cachedAudioInputTokens: 24,
      textOutputTokens: 30,
      audioOutputTokens: 170,
    });
  });

  it('counts cached tokens as text first without the split, and reads a missing usage as zeros', () => {
    const usage = realtimeUsage({
      usage: { input_tokens: 50, output_tokens: 5, input_token_details: { cached_tokens: 45, text_tokens: 30, audio_tokens: 20 } },
    });
    expect(usage).toMatchObject({ cachedTextInputTokens: 30, cachedAudioInputTokens: 15, textOutputTokens: 5, audioOutputTokens: 0 });
    expect(realtimeUsage({ status: 'cancelled', usage: null })).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      textInputTokens: 0,
      audioInputTokens: 0,
      cachedTextInputTokens: 0,
      cachedAudioInputTokens: 0,
      textOutputTokens: 0,
      audioOutputTokens: 0,
    });
  });
});

describe('watched events', () => {
  it('reads the events that carry money, wherever their type sits, and leaves the rest unparsed', () => {
    const done = Buffer.from('{"response":{"id":"resp_1","usage":null},"type":"response.done","event_id":"e1"}');
    expect(watchedServerEvent(done)).toMatchObject({ type: 'response.done', event: { response: { id: 'resp_1' } } });
    expect(watchedServerEvent(Buffer.from('{"type":"response.audio.delta","delta":"AAAA"}'))).toBeUndefined();
    // a transcript that quotes an event name is not that event
    expect(watchedServerEvent(Buffer.from('{"type":"response.text.delta","delta":"\\"response.done\\""}'))).toBeUndefined();
    expect(watchedServerEvent(Buffer.from('{"type":"response.done",'))).toBeUndefined();
    expect(watchedClientEvent(Buffer.from('{"type":"response.create","event_id":"c1"}'))).toMatchObject({ type: 'response.create' });
    expect(watchedClientEvent(Buffer.from('{"type":"conversation.item.create"}'))).toBeUndefined();
  });

  it('reads output limits as numbers, "inf" as none', () => {
    expect(outputLimitOf({ max_output_tokens: 300 })).toBe(300);
    expect(outputLimitOf({ max_response_output_tokens: 'inf' })).toBeUndefined();
    expect(outputLimitOf(undefined)).toBeUndefined();
  });
});

describe("the gateway's own count (for a response whose usage never comes)", () => {
  const frame = (event: unknown, space = '') => Buffer.from(JSON.stringify(event, null, space));

  it('measures an audio delta without decoding it, beta and GA names, any spacing, escaped slashes', () => {
    const audio = Buffer.alloc(4_800, 7).toString('base64');
    const beta = {
      type: 'response.audio.delta',
      response_id: 'resp_1',
      item_id: 'item_1',
      output_index: 0,
      content_index: 0,
      delta: audio,
    };
    expect(realtimeOutputDelta(frame(beta))).toEqual({ responseId: 'resp_1', part: 'item_1:0', audioBytes: 4_800 });
    expect(realtimeOutputDelta(frame({ ...beta, type: 'response.output_audio.delta' }, '  '))).toMatchObject({ audioBytes: 4_800 });
    // a serializer that escapes '/' as '\/'
    const slashed = Buffer.from([255, 255, 255, 63, 255]).toString('base64');
    expect(slashed).toContain('/');
    const escaped = Buffer.from(JSON.stringify({ ...beta, delta: slashed }).replace(/\//g, '\\/'));
    expect(realtimeOutputDelta(escaped)).toMatchObject({ audioBytes: 5 });
  });

  it('reads text, transcript and function-call deltas with their part, and nothing else', () => {
    const text = { type: 'response.text.delta', response_id: 'resp_2', item_id: 'item_2', content_index: 0, delta: 'Hello "there"' };
    expect(realtimeOutputDelta(frame(text))).toEqual({ responseId: 'resp_2', part: 'item_2:0', text: 'Hello "there"' });
    expect(realtimeOutputDelta(frame({ ...text, type: 'response.output_audio_transcript.delta' }))).toMatchObject({
      text: 'Hello "there"',
    });
    expect(
      realtimeOutputDelta(
        frame({ type: 'response.function_call_arguments.delta', response_id: 'r', item_id: 'call', output_index: 1, delta: '{"a":' }),
      ),
    ).toEqual({
      responseId: 'r',
      part: 'call:1',
      text: '{"a":',
    });
    expect(realtimeOutputDelta(frame({ type: 'input_audio_buffer.speech_started', note: 'a "delta" word' }))).toBeUndefined();
    expect(realtimeOutputDelta(frame({ type: 'response.text.done', text: 'x.delta"' }))).toBeUndefined();
    expect(realtimeOutputDelta(Buffer.from('{"type":"response.text.delta", broken'))).toBeUndefined();
  });

  it("reads what a client frame adds: appended audio, an item's text and audio", () => {
    expect(
      realtimeClientInput(frame({ type: 'input_audio_buffer.append', event_id: 'e1', audio: Buffer.alloc(24_000).toString('base64') })),
    ).toEqual({ bufferedAudioBytes: 24_000 });
    const item = {
      type: 'conversation.item.create',
      item: {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'hello' },
          { type: 'input_audio', audio: Buffer.alloc(960).toString('base64'), transcript: 'counted as its audio' },
          { type: 'input_audio', transcript: 'a transcript without audio' },
        ],
      },
    };
    expect(realtimeClientInput(frame(item))).toEqual({ texts: ['hello', 'a transcript without audio'], itemAudioBytes: 960 });
    expect(
      realtimeClientInput(
        frame({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'c', output: '{"ok":true}' } }),
      ),
    ).toEqual({
      texts: ['{"ok":true}'],
      itemAudioBytes: 0,
    });
    expect(realtimeClientInput(frame({ type: 'response.create' }))).toBeUndefined();
    expect(realtimeClientInput(frame({ type: 'session.update', session: { instructions: 'conversation.item.create' } }))).toBeUndefined();
  });

  it('knows the bytes a second of each audio format takes, beta and GA', () => {
    expect(audioBytesPerSecond(undefined, 'input')).toBe(48_000);
    expect(audioBytesPerSecond({ input_audio_format: 'pcm16' }, 'input')).toBe(48_000);
    expect(audioBytesPerSecond({ output_audio_format: 'g711_ulaw' }, 'output')).toBe(8_000);
    expect(audioBytesPerSecond({ audio: { output: { format: { type: 'audio/pcm', rate: 24_000 } } } }, 'output')).toBe(48_000);
    expect(audioBytesPerSecond({ audio: { input: { format: { type: 'audio/pcma' } } } }, 'input')).toBe(8_000);
    expect(namesAudioFormat({ instructions: 'x' }, 'input')).toBe(false);
    expect(namesAudioFormat({ input_audio_format: 'pcm16' }, 'input')).toBe(true);
  });
});

describe('realtime prices', () => {
  const admission = (model: string) => ({
    model,
    ratio: catalogPrice(model)!.modelRatio * 2,
    modelRatio: catalogPrice(model)!.modelRatio,
    groupRatio: 2,
  });

  it('reads audio prices from the catalog as shares of the text input price (gpt-4o-realtime-preview: $5 text, $40 / $80 audio, $2.50 cached)', () => {
    expect(catalogPrice('gpt-4o-realtime-preview')).toMatchObject({
      modelRatio: 2.5,
      completionRatio: 4,
      cacheReadRatio: 0.5,
      audioInputRatio: 8,
      audioOutputRatio: 16,
      audioCacheReadRatio: 0.5,
    });
  });

  it('charges text and audio apart, at the group ratio, and spells the formula out', () => {
    const ratios = realtimeRatios(admission('gpt-4o-realtime-preview'), 4);
    const usage = realtimeUsage({
      usage: {
        input_tokens: 160,
        output_tokens: 200,
        input_token_details: {
          cached_tokens: 64,
          text_tokens: 100,
          audio_tokens: 60,
          cached_tokens_details: { text_tokens: 40, audio_tokens: 24 },
        },
        output_token_details: { text_tokens: 30, audio_tokens: 170 },
      },
    });
    // (60 + 40 x 0.5 + 36 x 8 + 24 x 0.5 + 30 x 4 + 170 x 16) x 2.5 x 2 = (60 + 20 + 288 + 12 + 120 + 2720) x 5 = 16100
    expect(realtimeCharge(ratios, usage)).toEqual({
      charge: 16100,
      formula:
        '(text in 60 + cached text 40 × 0.5 + audio in 36 × 8 + cached audio 24 × 0.5 + ⌊text out 30 × 4⌋ + ⌊audio out 170 × 16⌋) × 2.5 × 2 = 16100',
    });
    // the bound: input at the audio price, output at the audio output price
    expect(realtimeBound(ratios, 1000, 100)).toBe((1000 * 8 + 100 * 16) * 5);
  });

  it('bills audio as text for a model the catalog prices no audio for, and says so', () => {
    const ratios = realtimeRatios({ model: 'my-own-realtime', ratio: 1, modelRatio: 1, groupRatio: 1 }, 3);
    expect(ratios).toMatchObject({ audioInputRatio: 1, audioOutputRatio: 3, audioPriced: false });
    const usage = realtimeUsage({
      usage: {
        input_tokens: 10,
        output_tokens: 10,
        input_token_details: { text_tokens: 5, audio_tokens: 5 },
        output_token_details: { text_tokens: 4, audio_tokens: 6 },
      },
    });
    const { charge, formula } = realtimeCharge(ratios, usage);
    expect(charge).toBe(5 + 5 + 12 + 18);
    expect(formula).toContain('audio at text prices');
  });

  it('charges nothing for a response that used no tokens, and at least 1 for one that did', () => {
    const ratios = realtimeRatios({ model: 'cheap', ratio: 0.001, modelRatio: 0.001, groupRatio: 1 }, 1);
    expect(realtimeCharge(ratios, realtimeUsage({ usage: null })).charge).toBe(0);
    expect(realtimeCharge(ratios, realtimeUsage({ usage: { input_tokens: 3, output_tokens: 1 } })).charge).toBe(1);
  });
});
