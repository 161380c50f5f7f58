// One upstream call of a channel check (a test or a balance query), and what
// both kinds of check share to read its answer: the deadline every such call
// has, OpenAI's error object as one line of text, and the channel as its
// adaptor knows it.
import { request as undiciRequest } from 'undici';
import type { ChannelConfig, UpstreamFailure } from '../protocols/types';
import type { ChannelRow } from '../repositories/channels';

/** Deadline for any one upstream call made by a check (test or balance). */
export const CHECK_TIMEOUT_MS = 30_000;

/** An upstream's answer to a check: its status and its whole body. */
export interface UpstreamAnswer {
  status: number;
  text: string;
}

/** One HTTP call with the check deadline; also stops when `signal` aborts (shutdown). */
export async function callUpstream(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<UpstreamAnswer> {
  const deadline = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const response = await undiciRequest(url, { ...init, signal: signal ? AbortSignal.any([deadline, signal]) : deadline });
    return { status: response.statusCode, text: await response.body.text() };
  } catch (error) {
    if (deadline.aborted) throw new Error(`upstream did not answer within ${CHECK_TIMEOUT_MS / 1000} s`, { cause: error });
    throw new Error(`could not reach upstream: ${(error as Error).message}`, { cause: error });
  }
}

/** "message (type t, code c)", from OpenAI's error object. */
export function describeFailure(failure: UpstreamFailure): string {
  const detail = [failure.type ? `type ${failure.type}` : '', failure.code != null ? `code ${failure.code}` : '']
    .filter(Boolean)
    .join(', ');
  return detail ? `${failure.message} (${detail})` : failure.message;
}

/** The parsed JSON of `text`, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether an HTTP status is a 2xx. */
export const isSuccessStatus = (status: number) => status >= 200 && status < 300;

/** What a channel's adaptor knows of it. */
export const configOf = (channel: ChannelRow): ChannelConfig => ({
  type: Number(channel.type),
  key: channel.key,
  baseUrl: channel.base_url ?? '',
  other: channel.other ?? '',
});
