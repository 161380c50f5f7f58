// The stream watcher of a client protocol whose stream always reports its own
// usage (Anthropic Messages, OpenAI Responses): nothing is asked on the
// client's behalf, so nothing is stripped; every byte goes on as it came and
// the protocol reads the events that bill as they pass.
import { SseParser, type SseEvent } from '../shared';
import type { StreamUsage, UsageWatcher } from './types';

export abstract class PassingUsageWatcher implements UsageWatcher {
  private readonly parser = new SseParser();
  /** The text streamed, for a count should the stream end without usage. */
  protected text = '';

  pushBytes(chunk: Buffer): Buffer {
    this.read(this.parser.push(chunk));
    return chunk;
  }

  flush(): string {
    this.read(this.parser.end());
    return '';
  }

  /** Reads the events that bill (usage, text deltas); any other passes unread. */
  protected abstract read(events: SseEvent[]): void;

  abstract reportedUsage(): StreamUsage | undefined;

  streamedText(): string {
    return this.text;
  }
}
