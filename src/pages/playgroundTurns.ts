// The playground's turns (PlaygroundPage.tsx): what each shows beside its
// text, how a call is timed and how what the gateway billed for it is read
// back. The billed figure is the consume log's row for the call's request id
// (the relay writes it when the answer ends, in batches at most 100 ms
// apart), so the page reads it a few times until it is there; the stream's
// own usage (stream_options.include_usage) stands in until then.
import type { LogRecord } from '../../common/records';
import { LogType } from '../../common/roles';
import { dataProvider } from '../dataProvider';
import { streamChat, type CallInfo, type ChatMessage, type ChatRequest, type ChatUsage } from '../dataProvider/relayChat';
import type { Failure } from './playgroundErrors';

/** What the gateway billed for a call, from its log row. */
export interface Billed {
  quota: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** What a turn reports of its call. */
export interface TurnReport {
  /** The exchange's X-Request-Id: its log row's request_id. */
  requestId?: string;
  /** Milliseconds from the request to the first piece of text; absent when none came. */
  firstTokenMs?: number;
  totalMs: number;
  /** What the stream said it used. */
  usage?: ChatUsage;
  /** The log row's figures; 'pending' while they are read, null when the log did not have them. */
  billed: Billed | null | 'pending';
}

/** One turn of the conversation as the page shows it. */
export interface Entry {
  id: number;
  role: 'user' | 'assistant';
  /** The text; '' for a call that failed before any came. */
  content: string;
  report?: TurnReport;
  /** Why the call failed, shown at its turn. */
  failure?: Failure;
}

/** The conversation as it is sent again: the turns with text, without what the page added to them. */
export const historyOf = (entries: readonly Entry[]): ChatMessage[] =>
  entries.filter((entry) => entry.content).map(({ role, content }) => ({ role, content }));

/** The time source of the timings (a test sets it). */
export const clock = { now: () => performance.now() };

/** Pauses before each read of the log row: the first after the relay's batch has had time to be written. */
export const BILLED_READ_DELAYS_MS = [250, 750, 1500, 3000];

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The consume row of a request id, or null when the log has none (yet). */
async function billedRow(requestId: string): Promise<Billed | null> {
  const { data } = await dataProvider.getList<LogRecord>('log', {
    pagination: { page: 1, perPage: 10 },
    sort: { field: 'id', order: 'DESC' },
    filter: { request_id: requestId },
  });
  const row = (data as LogRecord[]).find((candidate) => Number(candidate.type) === LogType.consume && candidate.request_id === requestId);
  if (!row) return null;
  return {
    quota: Number(row.quota),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.details?.cachedTokens ?? 0),
  };
}

/** What the gateway billed for a request, read from the log until it is there; null when it never was, or could not be read. */
export async function readBilled(requestId: string, delays: readonly number[] = BILLED_READ_DELAYS_MS): Promise<Billed | null> {
  for (const delay of delays) {
    await wait(delay);
    const billed = await billedRow(requestId).catch(() => null);
    if (billed) return billed;
  }
  return null;
}

/** A call's outcome: the text that came, its report, and the error that ended it (an abort is not one). */
export interface TurnOutcome {
  received: string;
  report: TurnReport;
  error?: unknown;
}

/** Streams one call, passing the text so far to `onText`, and times it from the request to its first piece and its end. */
export async function runTurn(
  key: () => Promise<string>,
  request: ChatRequest,
  signal: AbortSignal,
  onText: (text: string) => void,
): Promise<TurnOutcome> {
  const info: CallInfo = {};
  let received = '';
  let started: number | undefined;
  let firstTokenMs: number | undefined;
  let error: unknown;
  try {
    const secret = await key();
    started = clock.now();
    for await (const piece of streamChat(secret, request, signal, info)) {
      if (firstTokenMs === undefined) firstTokenMs = clock.now() - started;
      received += piece;
      onText(received);
    }
  } catch (caught) {
    if ((caught as Error)?.name !== 'AbortError') error = caught;
  }
  const totalMs = started === undefined ? 0 : clock.now() - started;
  const report: TurnReport = {
    requestId: info.requestId,
    firstTokenMs,
    totalMs,
    usage: info.usage,
    billed: info.requestId && received ? 'pending' : null,
  };
  return { received, report, ...(error === undefined ? {} : { error }) };
}
