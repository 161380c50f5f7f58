// Watches an OpenAI-style server-sent-event stream on its way to the client.
// It hands complete events on unchanged (optionally minus the usage-only event
// the gateway asked for on the client's behalf) and remembers enough to bill:
// the upstream's usage when it sends one, otherwise the streamed text, which is
// only parsed at the end and only if no usage arrived (JSON parsing every chunk
// would cost the hot path for nothing).

export interface StreamUsage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
}

interface UsageShape {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

const EVENT_END = '\n\n';
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class SseUsageWatcher {
  private pending = '';
  /** In stream order: data payloads of events read one by one, and chunks passed on whole (read only if needed). */
  private readonly payloads: Array<string | Buffer> = [];
  private usage: StreamUsage | undefined;
  /** True once the upstream sent `data: [DONE]`. */
  done = false;

  /** @param stripUsageEvent drop events that carry only usage (choices empty). */
  constructor(private readonly stripUsageEvent: boolean) {}

  /**
   * Takes a chunk of bytes from upstream; returns what to write to the client
   * now. The usual chunk (whole events, no usage, no end marker, nothing held
   * back) goes on as the very same bytes, unparsed.
   */
  pushBytes(chunk: Buffer): Buffer | string {
    const length = chunk.length;
    if (
      this.pending === '' &&
      length >= 2 &&
      chunk[length - 1] === NEWLINE &&
      chunk[length - 2] === NEWLINE &&
      chunk.indexOf(CARRIAGE_RETURN) === -1 &&
      chunk.indexOf('"usage"') === -1 &&
      chunk.indexOf('[DONE]') === -1
    ) {
      this.payloads.push(chunk);
      return chunk;
    }
    return this.push(chunk.toString('utf8'));
  }

  /** Takes a chunk from upstream; returns what to write to the client now (may be ''). */
  push(chunk: string): string {
    this.pending += chunk.includes('\r') ? chunk.replace(/\r\n/g, '\n') : chunk;
    const end = this.pending.lastIndexOf(EVENT_END);
    if (end < 0) return '';
    const complete = this.pending.slice(0, end + EVENT_END.length);
    this.pending = this.pending.slice(end + EVENT_END.length);
    return this.handleEvents(complete);
  }

  /** Whatever is left when the upstream ends, framed as a complete event. */
  flush(): string {
    if (!this.pending.trim()) return '';
    const rest = this.pending + EVENT_END;
    this.pending = '';
    return this.handleEvents(rest);
  }

  private handleEvents(text: string): string {
    let output = '';
    for (const event of text.split(EVENT_END)) {
      if (!event) continue;
      let keep = true;
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(line.charAt(5) === ' ' ? 6 : 5);
        if (payload === '[DONE]') {
          this.done = true;
          continue;
        }
        if (payload.includes('"usage"')) {
          keep = this.readUsage(payload) && keep;
        } else {
          this.payloads.push(payload);
        }
      }
      if (keep) output += event + EVENT_END;
    }
    return output;
  }

  /** Records usage; returns false when the event is usage-only and should be stripped. */
  private readUsage(payload: string): boolean {
    try {
      const parsed = JSON.parse(payload) as { usage?: UsageShape | null; choices?: unknown[] };
      if (parsed.usage && typeof parsed.usage === 'object') {
        this.usage = {
          promptTokens: Number(parsed.usage.prompt_tokens) || 0,
          completionTokens: Number(parsed.usage.completion_tokens) || 0,
          cachedPromptTokens: Number(parsed.usage.prompt_tokens_details?.cached_tokens) || 0,
        };
      }
      const usageOnly = Array.isArray(parsed.choices) && parsed.choices.length === 0;
      if (Array.isArray(parsed.choices) && parsed.choices.length > 0) this.payloads.push(payload);
      return !(this.stripUsageEvent && usageOnly);
    } catch {
      return true;
    }
  }

  /** The upstream's own usage, if it sent one. */
  reportedUsage(): StreamUsage | undefined {
    return this.usage;
  }

  /** The text streamed so far (chat deltas and completion texts), for counting locally. */
  streamedText(): string {
    let text = '';
    for (const payload of this.payloads.flatMap((part) => (typeof part === 'string' ? [part] : dataPayloads(part.toString('utf8'))))) {
      try {
        const parsed = JSON.parse(payload) as { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }> };
        for (const choice of parsed.choices ?? []) {
          if (typeof choice.delta?.content === 'string') text += choice.delta.content;
          else if (typeof choice.text === 'string') text += choice.text;
        }
      } catch {
        // a malformed event carries no billable text
      }
    }
    return text;
  }
}

/** The data payloads of whole events (a chunk passed on unparsed). */
function dataPayloads(text: string): string[] {
  const payloads: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('data:')) payloads.push(line.slice(line.charAt(5) === ' ' ? 6 : 5));
  }
  return payloads;
}
