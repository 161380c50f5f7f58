// The frame of a passthrough watcher for an answer streamed as server-sent
// events (Anthropic's, Gemini's): the bytes go on as they came, and each
// complete event's data is handed to the protocol's reading of it.
import { SseParser } from '../shared';
import type { StreamUsage, UsageWatcher } from './types';

export abstract class SseUsageWatcher implements UsageWatcher {
  private readonly parser = new SseParser();

  pushBytes(chunk: Buffer): Buffer {
    for (const { data } of this.parser.push(chunk)) this.readEvent(data);
    return chunk;
  }

  flush(): string {
    for (const { data } of this.parser.end()) this.readEvent(data);
    return '';
  }

  /** Reads one event's data (what bills, and the text). */
  protected abstract readEvent(data: string): void;
  abstract reportedUsage(): StreamUsage | undefined;
  abstract streamedText(): string;
}
