// A realtime session's upstream side: picking a channel that serves realtime
// and opening its WebSocket (the next channel on failure, up to RetryTimes
// more), and ws itself, loaded at the first session.
import type { Duplex } from 'node:stream';
import type { default as WebSocket, RawData } from 'ws';
import { isUpstreamFailure, type HttpTarget } from '../../protocols/types';
import { realtimeTarget, servesRealtime } from '../../protocols/upstream/realtime';
import { channelConfigOf, mappedModel } from '../attempt';
import { selectChannel, type RoutedChannel } from '../channelSelect';
import { withChannelKey } from '../channelKeyPick';
import type { RelayContext } from '../context';
import { relayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import { upstreamSettings } from '../upstream';
import { quietRepeatedEnds } from './quietEnds';

/** ws, loaded at the first upgrade: a gateway that never opens a realtime session does not carry it (about 1.5 MiB of heap). */
let wsModule: Promise<typeof import('ws')> | undefined;
export const loadWs = () => (wsModule ??= import('ws'));

/** A session opened upstream, for the client's side to join. */
export interface OpenedUpstream {
  channel: RoutedChannel;
  upstream: WebSocket;
  /** Frames the upstream sent before the client's side was open (session.created). */
  early: Array<{ data: Buffer; isBinary: boolean }>;
}

/** Picks a channel that serves realtime and opens its session; the next channel on failure, up to RetryTimes more. */
export async function openUpstream(
  ctx: RelayContext,
  caller: RelayCaller,
  model: string,
  query: Record<string, string>,
  client: Duplex,
  requestId: string,
  beta: boolean,
): Promise<OpenedUpstream | RelayError> {
  const exclude: number[] = [];
  let tries = Math.max(0, ctx.options.number('RetryTimes')) + 1;
  let lastError = relayError(503, `no channel available for model ${model}`, 'model_not_available', 'server_error');
  while (tries > 0 && !client.destroyed) {
    let picked = selectChannel(ctx.db, caller.user.group, model, {
      exclude,
      pinnedChannelId: caller.pinnedChannelId,
      cache: ctx.cache,
      book: ctx.routing,
    });
    if (picked instanceof Promise) picked = await picked;
    if (!picked) break;
    exclude.push(picked.id);
    // a channel of a type that serves no realtime is passed by without counting as a try
    if (!servesRealtime(picked.type)) continue;
    tries -= 1;
    let channel: RoutedChannel | undefined = picked;
    if (picked.multi_key) {
      const keyed = withChannelKey(ctx.db, picked, [], Math.random, ctx.cache);
      channel = keyed instanceof Promise ? await keyed : keyed;
      if (!channel) continue;
    }
    const target = realtimeTarget(channelConfigOf(channel), mappedModel(channel, model), query, beta);
    if (isUpstreamFailure(target)) {
      ctx.log.warn({ channelId: channel.id, requestId }, `realtime: ${target.message}`);
      continue;
    }
    const result = await connect(target, requestId, client);
    if ('upstream' in result) return { channel, ...result };
    ctx.log.warn(
      { channelId: channel.id, requestId, status: result.status },
      `realtime: the upstream refused the session: ${result.message}`,
    );
    lastError =
      result.status === 400 || result.status === 404
        ? relayError(result.status, `the upstream refused the session (request id ${requestId})`, 'invalid_request_error')
        : relayError(502, `the upstream service could not open the session (request id ${requestId})`, 'upstream_error', 'server_error');
  }
  return lastError;
}

/** Opens the upstream WebSocket; resolves once it is open, or with why not. */
async function connect(
  target: HttpTarget,
  requestId: string,
  client: Duplex,
): Promise<Omit<OpenedUpstream, 'channel'> | { status: number; message: string }> {
  const { default: WebSocket } = await loadWs();
  return new Promise((resolve) => {
    const early: OpenedUpstream['early'] = [];
    const upstream = new WebSocket(target.url, {
      headers: { ...target.headers, 'x-request-id': requestId },
      handshakeTimeout: upstreamSettings().connectTimeoutMs,
      maxPayload: 16 * 1024 * 1024,
      // no permessage-deflate offered: every frame the upstream sent compressed would be inflated here (and the
      // client's side, which does not compress either, would get it whole anyway)
      perMessageDeflate: false,
    });
    let settled = false;
    const done = (value: Omit<OpenedUpstream, 'channel'> | { status: number; message: string }) => {
      if (settled) return;
      settled = true;
      client.off('close', clientLeft);
      resolve(value);
    };
    // the client may leave while the upstream is being opened
    const clientLeft = () => {
      upstream.terminate();
      done({ status: 499, message: 'the client left' });
    };
    client.once('close', clientLeft);
    upstream.on('message', (data: RawData, isBinary: boolean) => early.push({ data: data as Buffer, isBinary }));
    upstream.once('open', () => {
      quietRepeatedEnds(upstream);
      done({ upstream, early });
    });
    upstream.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode ?? 502, message: Buffer.concat(chunks).toString('utf8').slice(0, 500) }));
      response.on('error', (error) => done({ status: 502, message: error.message }));
      upstream.terminate();
    });
    upstream.on('error', (error) => done({ status: 502, message: error.message }));
  });
}
