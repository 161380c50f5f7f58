// A stand-in for a protocol whose adaptor is not written yet: it offers no
// operation, so routing passes its channels by with a clear error.
import type { ChannelProtocol, UpstreamAdaptor } from '../types';
import { upstreamFailure } from '../shared';

export function pendingAdaptor(protocol: ChannelProtocol): UpstreamAdaptor {
  const refuse = () => upstreamFailure(501, `channel protocol ${protocol} is not supported by this relay yet`, { code: 'channel_type_unsupported', retryable: true });
  return {
    protocol,
    docs: '',
    operations: new Set(),
    transport: 'http',
    target: refuse,
    encodeChat: () => '',
    decodeChat: refuse,
    decodeChatStream: () => ({ push: () => [], end: () => [], usage: () => undefined, failure: refuse, done: () => true }),
    failure: refuse,
  };
}
