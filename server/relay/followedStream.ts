// A streamed answer at another URL than the call's: a vendor whose streamed
// call only starts the answer (Replicate: the prediction created with
// `stream: true` names its event stream in `urls.stream`, often on another
// host, stream.replicate.com) is followed with a GET through the same origin
// pools, and once its stream is done, asked once for the usage its events do
// not carry (the prediction at `urls.get`).
//
// The URLs come from the upstream's answer, so they are not trusted: the relay
// goes only to a host the adaptor names as its vendor's (`followHosts`, and
// their subdomains) over https on the default port, or to the channel's own
// base URL's origin (an operator's proxy, the tests' loopback emulator). Any
// other (an internal address, a cloud metadata endpoint) is refused before a
// byte is sent, and the channel's key never goes there.
import type { FastifyBaseLogger } from 'fastify';
import { Readable } from 'node:stream';
import { upstreamFailure } from '../protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatStreamDecoder,
  type UpstreamAdaptor,
  type UpstreamFailure,
  type Usage,
} from '../protocols/types';
import { callUpstream, DisconnectSignal, poolFor, type UpstreamResponse } from './upstream';

/** What following came to: the stream (its source and decoder, for dispatch to read as any other), or why not. */
export type Followed =
  { source: Readable; decoder: ChatStreamDecoder } | { failure: UpstreamFailure } | { error: unknown } | { aborted: true };

/** The URL when the relay may follow it for this channel, else undefined. */
export function followableUrl(url: string, channel: ChannelConfig, hosts: readonly string[]): URL | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username || parsed.password) return undefined;
  if (channel.baseUrl) {
    try {
      if (new URL(channel.baseUrl).origin === parsed.origin) return parsed;
    } catch {
      // a base URL that is not one: only the vendor's hosts remain
    }
  }
  // the default port only: an https host of the vendor's on another port is no service of the vendor's
  if (parsed.protocol !== 'https:' || parsed.port !== '') return undefined;
  const host = parsed.hostname.toLowerCase();
  return hosts.some((allowed) => host === allowed || host.endsWith(`.${allowed}`)) ? parsed : undefined;
}

/** A body read whole, whether the pool gave it as bytes or as a stream. */
async function bodyText(response: UpstreamResponse): Promise<string> {
  if (response.bytes) return response.bytes.toString('utf8');
  if (!response.stream) return '';
  const parts: Buffer[] = [];
  for await (const part of response.stream) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Follows the stream the upstream's first answer (`created`, already checked
 * to be a 2xx) names. Resolves once the stream's answer has begun (its
 * headers), with a source and decoder dispatch reads like any other stream's.
 */
export async function followStream(
  adaptor: UpstreamAdaptor,
  channel: ChannelConfig,
  call: AdaptorCall,
  created: UpstreamResponse,
  signal: DisconnectSignal,
  requestId: string | undefined,
  log: FastifyBaseLogger,
): Promise<Followed> {
  let text: string;
  try {
    text = await bodyText(created);
  } catch (error) {
    return signal.aborted ? { aborted: true } : { error };
  }
  const targets = adaptor.followStream!(text, channel, call);
  if (isUpstreamFailure(targets)) return { failure: targets };
  const hosts = adaptor.followHosts ?? [];
  const streamUrl = followableUrl(targets.stream.url, channel, hosts);
  if (!streamUrl) {
    // the address stays in the log; the client hears only that the channel failed
    log.warn(
      { requestId, protocol: adaptor.protocol, url: targets.stream.url },
      'refused to follow a stream URL outside the vendor and the channel',
    );
    return {
      failure: upstreamFailure(502, `the ${adaptor.protocol} upstream named a stream URL this gateway does not follow`, {
        code: 'stream_url_refused',
        retryable: true,
      }),
    };
  }
  let usageTarget: { url: URL; headers: Record<string, string> } | undefined;
  if (targets.usage) {
    const usageUrl = followableUrl(targets.usage.url, channel, hosts);
    if (usageUrl) usageTarget = { url: usageUrl, headers: targets.usage.headers };
    else
      log.warn(
        { requestId, protocol: adaptor.protocol, url: targets.usage.url },
        'refused to follow a usage URL outside the vendor and the channel',
      );
  }
  let response: UpstreamResponse;
  try {
    response = await callUpstream(
      poolFor(streamUrl.origin),
      { method: 'GET', path: streamUrl.pathname + streamUrl.search, headers: targets.stream.headers, requestId },
      signal,
    );
  } catch (error) {
    return signal.aborted ? { aborted: true } : { error };
  }
  if (response.status < 200 || response.status >= 300)
    return { failure: adaptor.failure(response.status, await bodyText(response).catch(() => '')) };
  // a stream that came as JSON (the vendor's refusal in a 200) is decoded all the same: its decoder reports what it holds
  const inner = response.stream ?? Readable.from(response.bytes ? [response.bytes] : []);
  const followed = new FollowedStream(inner, adaptor, call, usageTarget, requestId, log);
  return { source: followed.source, decoder: followed.decoder };
}

/**
 * The followed stream as dispatch reads it. Its source passes the stream's
 * bytes on; a second decoder of the same adaptor watches them here, so that
 * when the vendor's own end comes (or a failure), the stream is let go at
 * once and the usage is asked for, and the source ends only after that
 * answer. The decoder dispatch gets says done only then, so the usage is
 * known before anything is settled.
 */
class FollowedStream {
  readonly source: Readable;
  readonly decoder: ChatStreamDecoder;
  private following = true;
  private settled = false;
  private fetchedUsage: Usage | undefined;
  /** Cuts the usage request when the reader gives up (the client left). */
  private readonly usageSignal = new DisconnectSignal();

  constructor(
    private readonly inner: Readable,
    private readonly adaptor: UpstreamAdaptor,
    private readonly call: AdaptorCall,
    private readonly usageTarget: { url: URL; headers: Record<string, string> } | undefined,
    private readonly requestId: string | undefined,
    private readonly log: FastifyBaseLogger,
  ) {
    const watcher = adaptor.decodeChatStream(call);
    const reader = adaptor.decodeChatStream(call);
    this.source = new Readable({
      read: () => {
        if (this.following) inner.resume();
      },
      destroy: (error, callback) => {
        this.stopFollowing();
        this.usageSignal.abort();
        callback(error);
      },
    });
    inner.on('data', (piece: Buffer) => {
      if (!this.following) return;
      watcher.push(piece);
      if (!this.source.push(piece)) inner.pause();
      if (watcher.failure() || watcher.done()) this.finish(watcher);
    });
    inner.once('end', () => {
      if (!this.following) return;
      watcher.end();
      this.finish(watcher);
    });
    // an error after the relay let go of the stream (its own destroy) is nothing to report
    inner.on('error', (error) => {
      if (!this.following) return;
      this.following = false;
      this.source.destroy(error);
    });
    this.decoder = {
      push: (data) => reader.push(data),
      end: () => reader.end(),
      usage: () => reader.usage() ?? this.fetchedUsage,
      failure: () => reader.failure(),
      done: () => reader.done() && this.settled,
    };
  }

  private stopFollowing(): void {
    if (!this.following) return;
    this.following = false;
    // whatever the upstream sends after its end adds nothing; a reader that gave up wants nothing more
    this.inner.destroy();
  }

  /** The stream is over (the vendor's end, a failure, or the connection's end): ask for the usage if it ended well, then end the source. */
  private finish(watcher: ChatStreamDecoder): void {
    this.stopFollowing();
    if (watcher.done() && !watcher.failure() && !watcher.usage() && this.usageTarget) {
      void this.fetchUsage().then((usage) => {
        this.fetchedUsage = usage;
        this.settle();
      });
    } else {
      this.settle();
    }
  }

  private settle(): void {
    this.settled = true;
    if (!this.source.destroyed) this.source.push(null);
  }

  /**
   * The usage from the vendor's record of the call (Replicate's prediction
   * metrics). When it cannot be had (the request fails, or the record holds
   * no counts yet) the decoder reports none and translate.ts bills the
   * gateway's own count: the prompt as the client's protocol counts it and
   * the streamed text by the model's tokenizer.
   */
  private async fetchUsage(): Promise<Usage | undefined> {
    const { url, headers } = this.usageTarget!;
    try {
      const response = await callUpstream(
        poolFor(url.origin),
        { method: 'GET', path: url.pathname + url.search, headers, requestId: this.requestId },
        this.usageSignal,
      );
      const text = await bodyText(response);
      const usage = response.status >= 200 && response.status < 300 ? this.adaptor.usageAfterStream?.(text, this.call) : undefined;
      if (usage) return usage;
      this.log.warn(
        { requestId: this.requestId, protocol: this.adaptor.protocol, status: response.status },
        'the usage of a followed stream was not there: billing the gateway’s own count',
      );
    } catch (error) {
      if (!this.usageSignal.aborted) {
        this.log.warn(
          { requestId: this.requestId, protocol: this.adaptor.protocol, detail: (error as Error).message },
          'the usage of a followed stream could not be fetched: billing the gateway’s own count',
        );
      }
    }
    return undefined;
  }
}
