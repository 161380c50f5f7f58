// The upstream adaptors, one per wire protocol. Exhaustive: a new
// ChannelProtocol does not compile until it has an adaptor here.
import type { ChannelProtocol, UpstreamAdaptor } from '../types';
import { findChannelType } from '../../../common/channelTypes';
import { aliAdaptor } from './ali';
import { anthropicAdaptor } from './anthropic';
import { baiduAdaptor } from './baidu';
import { geminiAdaptor } from './gemini';
import { xunfeiAdaptor } from './xunfei';
import { zhipuAdaptor } from './zhipu';
import { openAiAdaptor } from './openai';
import { azureAdaptor } from './azure';
import { vertexAdaptor } from './vertex';
import { cozeAdaptor } from './coze';
import { replicateAdaptor } from './replicate';
import { deeplAdaptor } from './deepl';
import { aiProxyLibraryAdaptor } from './aiproxyLibrary';
import { bedrockAdaptor } from './bedrock';

export const UPSTREAM_ADAPTORS = {
  openai: openAiAdaptor,
  azure: azureAdaptor,
  anthropic: anthropicAdaptor,
  gemini: geminiAdaptor,
  baidu: baiduAdaptor,
  zhipu: zhipuAdaptor,
  ali: aliAdaptor,
  xunfei: xunfeiAdaptor,
  vertex: vertexAdaptor,
  coze: cozeAdaptor,
  replicate: replicateAdaptor,
  deepl: deeplAdaptor,
  'aiproxy-library': aiProxyLibraryAdaptor,
  bedrock: bedrockAdaptor,
} as const satisfies Record<ChannelProtocol, UpstreamAdaptor>;

/** The adaptor for a channel type; undefined for a number no row has. */
export function adaptorForChannelType(type: number): UpstreamAdaptor | undefined {
  const row = findChannelType(type);
  return row ? UPSTREAM_ADAPTORS[row.protocol] : undefined;
}
