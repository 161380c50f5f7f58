// Baidu's OAuth exchange: the `<API Key>|<Secret Key>` key for an access
// token the relay caches until shortly before it expires.
import { createHash } from 'node:crypto';
import type { CredentialExchange } from '../../types';
import { count, parseJson, upstreamFailure } from '../../shared';
import { failure } from './errors';
import { baseOf, splitKey } from './request';

// ---- the OAuth exchange ----

export const credential: CredentialExchange = {
  cacheKey(channel) {
    // the secret stays out of cache keys (they may be logged)
    return `baidu:${createHash('sha256')
      .update(`${baseOf(channel)}\n${channel.key}`)
      .digest('hex')}`;
  },
  request(channel) {
    const parts = splitKey(channel.key);
    if (!parts) {
      // a configuration that can never work, but the vendor has not said so: not a dead key, another channel may serve
      return upstreamFailure(500, 'the Baidu channel key must be "<API Key>|<Secret Key>" (two parts separated by one "|")', {
        type: 'invalid_channel_config',
        code: 'invalid_baidu_key',
        retryable: true,
      });
    }
    const query = new URLSearchParams({ grant_type: 'client_credentials', client_id: parts.apiKey, client_secret: parts.secretKey });
    return {
      url: `${baseOf(channel)}/oauth/2.0/token?${query.toString()}`,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    };
  },
  parse(status, body) {
    const answer = parseJson(body) as
      { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer && typeof answer.error === 'string' && answer.error) {
      const description = typeof answer.error_description === 'string' ? answer.error_description : '';
      // invalid_client: Baidu does not know this API key / secret pair
      const deadKey = answer.error === 'invalid_client';
      return upstreamFailure(
        status >= 400 ? status : 401,
        `Baidu token exchange: ${answer.error}${description ? `: ${description}` : ''}`,
        {
          type: 'baidu_oauth_error',
          code: answer.error,
          deadKey,
          retryable: true,
        },
      );
    }
    if (status < 200 || status >= 300) return failure(status, body);
    if (!answer || typeof answer.access_token !== 'string' || !answer.access_token) {
      return upstreamFailure(502, 'Baidu token exchange answered without an access_token', { type: 'baidu_oauth_error', retryable: true });
    }
    return { credential: answer.access_token, expiresInSeconds: count(answer.expires_in) };
  },
};
