// A Bedrock channel's key, read: IAM credentials for SigV4 (`AK|SK|region`,
// with an optional fourth part, a session token), or a Bedrock API key (a
// bearer token, `key` or `key|region`; the region otherwise from `other`).
import type { ChannelConfig, UpstreamFailure } from '../../types';
import { upstreamFailure } from '../../shared';

export type BedrockKey =
  | { kind: 'iam'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string }
  | { kind: 'api-key'; token: string; region: string };

/** The region when neither the key nor `other` names one (the channel type's `other` fallback too). */
export const DEFAULT_REGION = 'us-east-1';

/** An AWS region name (`us-east-1`, `eu-central-2`, `us-gov-west-1`): it goes into a host name. */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

const malformed = (message: string): UpstreamFailure =>
  upstreamFailure(401, message, { code: 'invalid_key', deadKey: true, retryable: true });

export function bedrockKey(channel: ChannelConfig): BedrockKey | UpstreamFailure {
  const parts = channel.key.split('|').map((part) => part.trim());
  if (parts.some((part) => part === ''))
    return malformed('the Bedrock key has an empty part: write it as AK|SK|region[|session token], or as an API key[|region]');
  let key: BedrockKey;
  if (parts.length >= 3 && parts.length <= 4) {
    const [accessKeyId, secretAccessKey, region, sessionToken] = parts;
    key = { kind: 'iam', accessKeyId, secretAccessKey, region, ...(sessionToken ? { sessionToken } : {}) };
  } else if (parts.length <= 2) {
    key = { kind: 'api-key', token: parts[0], region: parts[1] ?? (channel.other.trim() || DEFAULT_REGION) };
  } else {
    return malformed('the Bedrock key has too many parts: write it as AK|SK|region[|session token], or as an API key[|region]');
  }
  if (!REGION.test(key.region)) return malformed(`"${key.region}" is not an AWS region (like us-east-1)`);
  return key;
}
