// The stream watcher of a client protocol whose stream always reports its own
// usage (Anthropic Messages, OpenAI Responses, Gemini): nothing is asked on
// the client's behalf, so nothing is stripped; every byte goes on as it came
// and the protocol reads each complete event's data as it passes.
import { SseParser } from '../shared';
import type { StreamUsage, UsageWatcher } from './types';

export abstract class PassingUsageWatcher implements UsageWatcher {
  private readonly parser = new SseParser();
  /** The text streamed, for a count should the stream end without usage. */
  protected text = '';

  pushBytes(chunk: Buffer): Buffer {
    for (const { data } of this.parser.push(chunk)) this.readEvent(data);
    return chunk;
  }

  flush(): string {
    for (const { data } of this.parser.end()) this.readEvent(data);
    return '';
  }

  /** Reads one event's data if it bills (usage, text deltas); any other passes unread. */
  protected abstract readEvent(data: string): void;

  abstract reportedUsage(): StreamUsage | undefined;

  streamedText(): string {
    return this.text;
  }
}
