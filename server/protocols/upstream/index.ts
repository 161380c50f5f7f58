// The upstream adaptors, one per wire protocol. Exhaustive: a new
// ChannelProtocol does not compile until it has an adaptor here.
import type { ChannelProtocol, UpstreamAdaptor } from '../types';
import { findChannelType } from '../../../common/channelTypes';
import { pendingAdaptor } from './pending';
import { openAiAdaptor } from './openai';
import { azureAdaptor } from './azure';
import { anthropicAdaptor } from './anthropic';

export const UPSTREAM_ADAPTORS = {
  openai: openAiAdaptor,
  azure: azureAdaptor,
  anthropic: anthropicAdaptor,
  gemini: pendingAdaptor('gemini'),
  baidu: pendingAdaptor('baidu'),
  zhipu: pendingAdaptor('zhipu'),
  ali: pendingAdaptor('ali'),
  xunfei: pendingAdaptor('xunfei'),
} as const satisfies Record<ChannelProtocol, UpstreamAdaptor>;

/** The adaptor for a channel type; undefined for a number no row has. */
export function adaptorForChannelType(type: number): UpstreamAdaptor | undefined {
  const row = findChannelType(type);
  return row ? UPSTREAM_ADAPTORS[row.protocol] : undefined;
}
