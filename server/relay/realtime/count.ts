// The gateway's own count of a realtime conversation, kept beside the frames
// as they pass: what the client added (text by the model's tokenizer, audio
// by its seconds), the output that passed to the client per response, and
// what the upstream last reported. It is read only for a response whose usage
// never comes (the upstream dropped, or did not answer the cancel in time),
// which is then billed at this count, estimated.
import {
  audioBytesPerSecond,
  namesAudioFormat,
  REALTIME_AUDIO_TOKENS_PER_SECOND,
  type RealtimeClientInput,
  type realtimeOutputDelta,
  type RealtimeUsage,
} from '../../protocols/upstream/realtime';
import { countTextTokens } from '../../protocols/inbound/tokenCount';

/** The conversation a response started from, as the gateway counts it (used only when its usage never comes). */
interface InputCount {
  /** Text and audio tokens of the conversation as the upstream last reported it (a response.done's input plus output). */
  reportedText: number;
  reportedAudio: number;
  /** Text added since (the session's instructions too while nothing is reported), counted with the tokenizer only when needed. */
  texts: string[];
  /** Seconds of input audio added since. */
  audioSeconds: number;
}

/** A response the upstream began: its input when it began, and the output that passed to the client. */
export interface ResponseCount {
  input: InputCount;
  /** How far into the session's additions its input reached: they leave the count once its usage is reported. */
  mark: { texts: number; audioSeconds: number };
  /** Text by output part (text, transcript, function-call arguments). */
  outputTexts: Map<string, string>;
  outputAudioSeconds: number;
}

/** Tokens for seconds of audio at a rate, rounded up, without float noise turning 6 into 7. */
const audioTokens = (seconds: number, perSecond: number) => Math.ceil(Number((seconds * perSecond).toFixed(6)));

/**
 * The most tokens a client frame can add to the conversation: its bytes (no
 * token stands for less than one), except an audio append, whose base64 audio
 * is billed by its seconds (about 64k characters a second of PCM16, some ten
 * tokens): one token per 1,000 bytes. The frame's type is read from the frame
 * parsed (`input`), never from a substring a text could carry.
 */
export function tokensOfClientFrame(frame: Buffer, input: RealtimeClientInput | undefined): number {
  if (input?.bufferedAudioBytes !== undefined) return Math.ceil(frame.length / 1000);
  // an item's audio parts are audio too: their base64 at the same rate, the rest of the frame by its bytes
  const audioCharacters = Math.min(frame.length, Math.ceil((input?.itemAudioBytes ?? 0) / 3) * 4);
  return frame.length - audioCharacters + Math.ceil(audioCharacters / 1000);
}

/** One session's count of its conversation, and of each response in flight. */
export class ConversationCount {
  private instructions = '';
  private inputBytesPerSecond = audioBytesPerSecond(undefined, 'input');
  private outputBytesPerSecond = audioBytesPerSecond(undefined, 'output');
  /** The conversation's tokens as the last response.done reported them; undefined before any. */
  private reported: { text: number; audio: number } | undefined;
  /** Texts added since the last report; `droppedTexts` counts those removed from the front over the session. */
  private addedTexts: string[] = [];
  private droppedTexts = 0;
  /** Seconds of audio the conversation gained over the session, and how many of them a report has covered. */
  private addedAudioSeconds = 0;
  private reportedAudioSeconds = 0;
  /** Audio appended to the input buffer and not yet committed. */
  private bufferedAudioSeconds = 0;
  /** The responses in flight, by id: what they started from and what of them passed. */
  readonly counts = new Map<string, ResponseCount>();

  /** The upstream's account of the session in force (session.created, session.updated): its instructions and audio formats. */
  sessionSaid(session: Record<string, unknown>): void {
    if (typeof session.instructions === 'string') this.instructions = session.instructions;
    if (namesAudioFormat(session, 'input')) this.inputBytesPerSecond = audioBytesPerSecond(session, 'input');
    if (namesAudioFormat(session, 'output')) this.outputBytesPerSecond = audioBytesPerSecond(session, 'output');
  }

  /** The input audio buffer was committed: its audio joins the conversation. */
  bufferCommitted(): void {
    this.addedAudioSeconds += this.bufferedAudioSeconds;
    this.bufferedAudioSeconds = 0;
  }

  /** The input audio buffer was cleared. */
  bufferCleared(): void {
    this.bufferedAudioSeconds = 0;
  }

  /** What a client frame adds to the conversation, in the gateway's count. */
  countInput(input: RealtimeClientInput): void {
    if (input.bufferedAudioBytes) this.bufferedAudioSeconds += input.bufferedAudioBytes / this.inputBytesPerSecond;
    if (input.itemAudioBytes) this.addedAudioSeconds += input.itemAudioBytes / this.inputBytesPerSecond;
    if (input.texts) this.addedTexts.push(...input.texts);
  }

  /** An output delta on its way to the client (`clientOpen`: whether it can still reach it): counted for its response. */
  countOutput(delta: NonNullable<ReturnType<typeof realtimeOutputDelta>>, clientOpen: boolean): void {
    const count = this.counts.get(delta.responseId);
    if (!count || !clientOpen) return;
    if (delta.text) count.outputTexts.set(delta.part, (count.outputTexts.get(delta.part) ?? '') + delta.text);
    if (delta.audioBytes) count.outputAudioSeconds += delta.audioBytes / this.outputBytesPerSecond;
  }

  /** A response begins: the conversation it starts from, as counted now. */
  startCount(responseId: string): void {
    const texts = this.reported ? [...this.addedTexts] : [this.instructions, ...this.addedTexts];
    this.counts.set(responseId, {
      input: {
        reportedText: this.reported?.text ?? 0,
        reportedAudio: this.reported?.audio ?? 0,
        texts: texts.filter(Boolean),
        audioSeconds: this.addedAudioSeconds - this.reportedAudioSeconds,
      },
      mark: { texts: this.droppedTexts + this.addedTexts.length, audioSeconds: this.addedAudioSeconds },
      outputTexts: new Map(),
      outputAudioSeconds: 0,
    });
  }

  /** A response reported its usage: the conversation is what it says, plus what was added after the response began. */
  reportCount(responseId: string, usage: RealtimeUsage): void {
    const count = this.counts.get(responseId);
    this.counts.delete(responseId);
    if (!count || usage.inputTokens + usage.outputTokens === 0) return;
    this.reported = { text: usage.textInputTokens + usage.textOutputTokens, audio: usage.audioInputTokens + usage.audioOutputTokens };
    const drop = count.mark.texts - this.droppedTexts;
    if (drop > 0) {
      this.addedTexts.splice(0, drop);
      this.droppedTexts += drop;
    }
    this.reportedAudioSeconds = Math.max(this.reportedAudioSeconds, count.mark.audioSeconds);
  }
}

/**
 * The usage of a response that began and never reported its own, at the
 * gateway's count (nothing cached): the conversation it started from (what the
 * upstream last reported, plus text added since by the model's tokenizer and
 * audio at OpenAI's documented tokens per second) and the output that passed
 * to the client (text by the tokenizer, audio by its length).
 */
export function cutOffUsage(count: ResponseCount, model: string, options: { approximate: boolean }): RealtimeUsage {
  const tokens = (texts: Iterable<string>) => {
    let total = 0;
    for (const text of texts) total += countTextTokens(text, model, options);
    return total;
  };
  const textInput = count.input.reportedText + tokens(count.input.texts);
  const audioInput = count.input.reportedAudio + audioTokens(count.input.audioSeconds, REALTIME_AUDIO_TOKENS_PER_SECOND.input);
  const textOutput = tokens(count.outputTexts.values());
  const audioOutput = audioTokens(count.outputAudioSeconds, REALTIME_AUDIO_TOKENS_PER_SECOND.output);
  return {
    inputTokens: textInput + audioInput,
    outputTokens: textOutput + audioOutput,
    textInputTokens: textInput,
    audioInputTokens: audioInput,
    cachedTextInputTokens: 0,
    cachedAudioInputTokens: 0,
    textOutputTokens: textOutput,
    audioOutputTokens: audioOutput,
  };
}
