// The stream watcher of a client protocol whose stream always reports its own
// usage (Anthropic Messages, OpenAI Responses, Gemini): nothing is asked on
// the client's behalf, so nothing is stripped; every byte goes on as it came
// and the protocol reads each complete event's data as it passes.
import { SseParser } from '../shared';
import type { InboundCodec, Usage, UsageWatcher } from './types';

/** A positive whole number from a JSON field, else 0. */
export const positiveWhole = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/**
 * The request-body rules such a protocol's codec shares: one answer per
 * request, `stream: true` to stream, no usage to ask for, and the output
 * limit in one top-level field, named by the protocol.
 */
export function selfReportingBodyRules(
  limitField: string,
): Pick<
  InboundCodec,
  'outputLimit' | 'answers' | 'streamed' | 'streamUsageAskable' | 'clientAskedUsage' | 'modelUnchanged' | 'encodeChanged'
> {
  return {
    outputLimit: (body) => positiveWhole(body[limitField]),
    answers: () => 1,
    streamed: (body) => body.stream === true,
    streamUsageAskable: () => false,
    clientAskedUsage: () => false,
    modelUnchanged: (body, upstreamModel) => upstreamModel === body.model,
    encodeChanged: (body, change) =>
      JSON.stringify(
        change.outputLimit === undefined
          ? { ...body, model: change.model }
          : { ...body, model: change.model, [limitField]: change.outputLimit },
      ),
  };
}

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

  abstract reportedUsage(): Usage | undefined;

  streamedText(): string {
    return this.text;
  }
}
