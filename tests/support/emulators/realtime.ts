// A loopback upstream of OpenAI's Realtime API (beta, `OpenAI-Beta:
// realtime=v1`): https://platform.openai.com/docs/api-reference/realtime.
// OpenAI's URL /v1/realtime?model=<model> with `Authorization: Bearer <key>`,
// and Azure's /openai/realtime?api-version=<v>&deployment=<d> with `api-key`.
// A wrong key is refused before the upgrade with OpenAI's 401 error body.
//
// On connect: `session.created` (turn detection off, so every response is
// asked for). Client events answered as OpenAI answers them:
// session.update -> session.updated; conversation.item.create ->
// conversation.item.created; input_audio_buffer.append (kept) and .commit ->
// input_audio_buffer.committed and conversation.item.created; response.create
// -> response.created, output_item.added, content_part.added, one text (or
// audio and transcript) delta per word of "Hello from realtime, you said:
// <last user text>" every `deltaMs` (0: back to back, for the benchmark), the
// .done events, and response.done with
// usage; response.cancel -> response.done with status "cancelled" and the
// usage so far; a second response.create while one runs -> an `error` event
// (conversation_already_has_active_response) naming the client's event_id.
// With turn_detection server_vad, every 48 000 bytes of appended audio (a
// second of PCM16) is a turn the server commits and answers by itself.
// Usage, deterministic: text input = words of the conversation's text items;
// audio input = committed audio bytes / 4800 (rounded up); cached = the
// previous response's input (cached text first, then audio); text output =
// words sent; audio output = 2 per audio delta (each is 100 ms of PCM16, 4 800
// bytes: OpenAI counts 20 tokens a second of assistant audio and 10 of user
// audio, https://platform.openai.com/docs/guides/realtime-costs). A user text containing
// "slowly" gets 200 words; "drop" makes the server cut the socket (1011)
// after the third delta; "stall" makes the response stop after the third delta
// and never answer response.cancel (its usage never comes). `honest: true`
// bills text input as the size-honest upstream does (sizeHonest.ts): every
// string and key of the session's instructions and tools, of every item the
// client created and of the response.create itself, by OpenAI's tokenizer,
// and answers as many words as the response's limit allows. A binary frame is echoed back as binary (a test aid:
// OpenAI sends none).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { honestPromptTokens } from './sizeHonest';
import { listenOnLoopback } from './types';

export const REALTIME_GOOD_KEY = 'sk-realtime-upstream-good';
export const AZURE_REALTIME_GOOD_KEY = 'azure-realtime-good-key';

export interface RealtimeUsageReport {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_token_details: {
    cached_tokens: number;
    text_tokens: number;
    audio_tokens: number;
    cached_tokens_details: { text_tokens: number; audio_tokens: number };
  };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

export interface RealtimeEmulatorSession {
  url: string;
  headers: IncomingMessage['headers'];
  /** Frames the emulator received, as they came (text as strings, binary as Buffers). */
  received: Array<string | Buffer>;
  /** Frames the emulator sent, as sent. */
  sent: Array<string | Buffer>;
  /** The close code the emulator saw, once closed. */
  closedWith?: number;
}

export interface RealtimeEmulator {
  baseUrl: string;
  sessions: RealtimeEmulatorSession[];
  /** response.done usages, in order. */
  reported: Array<RealtimeUsageReport & { status: string }>;
  /** Milliseconds between deltas; 0 sends them back to back (each on the next turn of the event loop). */
  deltaMs: number;
  close(): Promise<void>;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** `record: false` (the benchmark) keeps no sessions, frames or usages: a long run holds no memory for them. */
export async function startRealtimeEmulator(options: { record?: boolean; honest?: boolean } = {}): Promise<RealtimeEmulator> {
  const recording = options.record !== false;
  const honest = options.honest === true;
  const server = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"Not found","type":"invalid_request_error"}}');
  });
  const sockets = new WebSocketServer({ noServer: true });
  const emulator: RealtimeEmulator = { baseUrl: '', sessions: [], reported: [], deltaMs: 5, close: async () => undefined };

  const refuse = (socket: Duplex, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  };

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://emulator');
    let model: string | null;
    if (url.pathname === '/v1/realtime') {
      if (request.headers.authorization !== `Bearer ${REALTIME_GOOD_KEY}`) {
        return refuse(socket, 401, {
          error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key', param: null },
        });
      }
      // a beta client asks with OpenAI-Beta: realtime=v1; a GA client asks with nothing (the session records which)
      const beta = request.headers['openai-beta'];
      if (beta !== undefined && beta !== 'realtime=v1')
        return refuse(socket, 400, { error: { message: `unknown OpenAI-Beta: ${String(beta)}`, type: 'invalid_request_error' } });
      model = url.searchParams.get('model');
    } else if (url.pathname === '/openai/realtime') {
      if (request.headers['api-key'] !== AZURE_REALTIME_GOOD_KEY)
        return refuse(socket, 401, {
          error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' },
        });
      if (!url.searchParams.get('api-version'))
        return refuse(socket, 400, { error: { code: 'BadRequest', message: 'api-version is required' } });
      model = url.searchParams.get('deployment');
    } else {
      return refuse(socket, 404, { error: { message: 'Not found', type: 'invalid_request_error' } });
    }
    if (!model) return refuse(socket, 400, { error: { message: 'model is required', type: 'invalid_request_error' } });
    const session: RealtimeEmulatorSession = { url: request.url ?? '', headers: request.headers, received: [], sent: [] };
    if (recording) emulator.sessions.push(session);
    sockets.handleUpgrade(request, socket, head, (ws) => runSession(ws, model, session, emulator, recording, honest));
  });

  const listening = await listenOnLoopback(server, () => {
    for (const client of sockets.clients) client.terminate();
  });
  emulator.baseUrl = listening.baseUrl;
  emulator.close = () => listening.close();
  return emulator;
}

let counter = 0;
const id = (prefix: string) => `${prefix}_${(counter += 1).toString(36).padStart(6, '0')}`;

function runSession(
  ws: WebSocket,
  model: string,
  record: RealtimeEmulatorSession,
  emulator: RealtimeEmulator,
  recording: boolean,
  honest: boolean,
): void {
  const send = (event: Record<string, unknown>) => {
    if (ws.readyState !== ws.OPEN) return;
    const text = JSON.stringify({ event_id: id('event'), ...event });
    if (recording) record.sent.push(text);
    ws.send(text);
  };
  const session = {
    id: id('sess'),
    object: 'realtime.session',
    model,
    modalities: ['text', 'audio'],
    instructions: '',
    voice: 'alloy',
    input_audio_format: 'pcm16',
    output_audio_format: 'pcm16',
    input_audio_transcription: null,
    turn_detection: null as null | { type?: string },
    tools: [],
    tool_choice: 'auto',
    temperature: 0.8,
    max_response_output_tokens: 'inf' as number | 'inf',
  };
  const textItems: string[] = [];
  /** Every item the client created, whole (the honest count reads every field of them). */
  const items: unknown[] = [];
  let audioBuffer = 0;
  let committedAudio = 0;
  let previousInput = { text: 0, audio: 0 };
  let lastItemId: string | null = null;
  let running: { id: string; cancel: () => void } | undefined;

  send({ type: 'session.created', session });

  ws.on('close', (code) => {
    record.closedWith = code;
    running?.cancel();
  });
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const frame = data as Buffer;
    if (isBinary) {
      if (recording) record.received.push(Buffer.from(frame));
      ws.send(frame, { binary: true });
      return;
    }
    const text = frame.toString('utf8');
    if (recording) record.received.push(text);
    let event: Record<string, any>;
    try {
      event = JSON.parse(text);
    } catch {
      return send({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          code: 'invalid_json',
          message: 'The server received invalid JSON.',
          param: null,
          event_id: null,
        },
      });
    }
    switch (event.type) {
      case 'session.update':
        Object.assign(session, event.session ?? {});
        return send({ type: 'session.updated', session });
      case 'conversation.item.create': {
        const item = { id: event.item?.id ?? id('item'), object: 'realtime.item', status: 'completed', ...event.item };
        items.push(event.item);
        for (const part of item.content ?? []) if (typeof part.text === 'string') textItems.push(part.text);
        send({ type: 'conversation.item.created', previous_item_id: lastItemId, item });
        lastItemId = item.id;
        return;
      }
      case 'input_audio_buffer.append':
        audioBuffer += Buffer.from(String(event.audio ?? ''), 'base64').length;
        // server VAD: a second of audio is a turn; the server commits it and answers by itself
        if (session.turn_detection?.type === 'server_vad' && audioBuffer >= 48_000 && !running) {
          send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: id('item') });
          send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 1000, item_id: id('item') });
          commit();
          respond({});
        }
        return;
      case 'input_audio_buffer.commit':
        commit();
        return;
      case 'response.cancel':
        running?.cancel();
        return;
      case 'response.create': {
        if (running) {
          return send({
            type: 'error',
            error: {
              type: 'invalid_request_error',
              code: 'conversation_already_has_active_response',
              message: `Conversation already has an active response in progress: ${running.id}.`,
              param: null,
              event_id: event.event_id ?? null,
            },
          });
        }
        respond(event.response ?? {});
        return;
      }
      default:
        return send({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            code: 'unknown_event',
            message: `Invalid value: '${event.type}'.`,
            param: 'type',
            event_id: event.event_id ?? null,
          },
        });
    }
  });

  function commit(): void {
    const itemId = id('item');
    committedAudio += audioBuffer;
    audioBuffer = 0;
    send({ type: 'input_audio_buffer.committed', previous_item_id: lastItemId, item_id: itemId });
    send({
      type: 'conversation.item.created',
      previous_item_id: lastItemId,
      item: {
        id: itemId,
        object: 'realtime.item',
        type: 'message',
        status: 'completed',
        role: 'user',
        content: [{ type: 'input_audio', transcript: null }],
      },
    });
    lastItemId = itemId;
  }

  /** The next delta's turn: after deltaMs, or (0) on the event loop's next turn. */
  const later = (step: () => void): NodeJS.Timeout | undefined => {
    if (emulator.deltaMs > 0) return setTimeout(step, emulator.deltaMs);
    // a response cancelled meanwhile (or one that followed it) takes no step of this one
    const current = running;
    setImmediate(() => (current && running === current ? step() : undefined));
    return undefined;
  };

  function respond(options: Record<string, any>): void {
    const responseId = id('resp');
    const modalities: string[] = options.modalities ?? session.modalities;
    const audio = modalities.includes('audio');
    const lastText = textItems.at(-1) ?? '';
    const limit =
      typeof options.max_output_tokens === 'number'
        ? options.max_output_tokens
        : typeof session.max_response_output_tokens === 'number'
          ? session.max_response_output_tokens
          : Infinity;
    // honest: as many words as the limit allows (at most 64), else the greeting
    const reply = honest
      ? Array.from({ length: Math.min(64, limit) }, (_, index) => `w${index}`)
      : /slowly/.test(lastText)
        ? Array.from({ length: 200 }, (_, index) => `word${index}`)
        : words(`Hello from realtime, you said: ${lastText}`);
    // honest: every field the session, the items and the response.create carry, by OpenAI's tokenizer
    const textInput = honest
      ? honestPromptTokens({ instructions: session.instructions, tools: session.tools, items, response: options }, 'openai', model)
      : textItems.reduce((sum, item) => sum + words(item).length, 0);
    const audioInput = Math.ceil(committedAudio / 4800);
    const cachedText = Math.min(previousInput.text, textInput);
    const cachedAudio = Math.min(previousInput.audio, audioInput);
    const itemId = id('item');
    let sentWords = 0;
    let audioDeltas = 0;
    let timer: NodeJS.Timeout | undefined;
    const base = { id: responseId, object: 'realtime.response', output: [], usage: null, status_details: null };
    send({ type: 'response.created', response: { ...base, status: 'in_progress' } });
    const item = { id: itemId, object: 'realtime.item', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item });
    send({
      type: 'response.content_part.added',
      response_id: responseId,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: audio ? { type: 'audio', transcript: '' } : { type: 'text', text: '' },
    });

    const finish = (status: 'completed' | 'cancelled' | 'incomplete') => {
      clearTimeout(timer);
      running = undefined;
      const text = reply.slice(0, sentWords).join(' ');
      const textOutput = audio ? 0 : sentWords;
      const transcriptTokens = audio ? sentWords : 0;
      const audioOutput = audioDeltas * 2;
      const usage: RealtimeUsageReport = {
        total_tokens: textInput + audioInput + textOutput + transcriptTokens + audioOutput,
        input_tokens: textInput + audioInput,
        output_tokens: textOutput + transcriptTokens + audioOutput,
        input_token_details: {
          cached_tokens: cachedText + cachedAudio,
          text_tokens: textInput,
          audio_tokens: audioInput,
          cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio },
        },
        output_token_details: { text_tokens: textOutput + transcriptTokens, audio_tokens: audioOutput },
      };
      previousInput = { text: textInput, audio: audioInput };
      if (recording) emulator.reported.push({ ...usage, status });
      if (status === 'completed') {
        send(
          audio
            ? { type: 'response.audio.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 }
            : { type: 'response.text.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, text },
        );
        send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: { ...item, status: 'completed' } });
      }
      const content = audio ? [{ type: 'audio', transcript: text }] : [{ type: 'text', text }];
      send({
        type: 'response.done',
        response: {
          ...base,
          status,
          status_details: status === 'cancelled' ? { type: 'cancelled', reason: 'client_cancelled' } : null,
          output: [{ ...item, status, content }],
          usage,
        },
      });
    };
    running = { id: responseId, cancel: () => finish('cancelled') };

    const next = () => {
      if (sentWords >= reply.length || sentWords >= limit)
        return finish(sentWords >= limit && sentWords < reply.length ? 'incomplete' : 'completed');
      const word = (sentWords === 0 ? '' : ' ') + reply[sentWords];
      sentWords += 1;
      if (audio) {
        audioDeltas += 1;
        send({
          type: 'response.audio.delta',
          response_id: responseId,
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: randomBytes(4_800).toString('base64'),
        });
        send({
          type: 'response.audio_transcript.delta',
          response_id: responseId,
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: word,
        });
      } else {
        send({ type: 'response.text.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: word });
      }
      if (/drop/.test(lastText) && sentWords === 3) {
        clearTimeout(timer);
        running = undefined;
        ws.close(1011, 'upstream fell over');
        return;
      }
      if (/stall/.test(lastText) && sentWords === 3) {
        running = { id: responseId, cancel: () => undefined };
        return;
      }
      timer = later(next);
    };
    timer = later(next);
  }
}
