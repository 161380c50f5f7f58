// The service-account exchange: a JWT signed with the key's private key
// (RS256, by jose) traded at the key's token_uri for an OAuth access token,
// which the relay caches until shortly before it expires.
// https://developers.google.com/identity/protocols/oauth2/service-account#httprest
import { createHash } from 'node:crypto';
import { readServiceAccountKey } from '../../../../common/serviceAccountKey';
import type { CredentialExchange, UpstreamFailure } from '../../types';
import { count, parseJson, upstreamFailure } from '../../shared';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The longest life Google grants an assertion. */
const ASSERTION_LIFE_SECONDS = 3600;

/** A key the relay cannot use: its owner's to fix, but not the vendor's word that it is dead (as Baidu's malformed key). */
export function malformedKey(problem: string): UpstreamFailure {
  return upstreamFailure(500, `the Vertex AI channel key is not usable: ${problem}`, {
    type: 'invalid_channel_config',
    code: 'invalid_service_account_key',
    retryable: true,
  });
}

// the OAuth errors that say this service account, or this key of it, will not be given tokens
const DEAD_GRANT_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

export const credential: CredentialExchange = {
  cacheKey(channel) {
    // the private key stays out of cache keys (they may be logged)
    return `vertex:${createHash('sha256').update(channel.key).digest('hex')}`;
  },
  async request(channel) {
    const account = readServiceAccountKey(channel.key);
    if ('problem' in account) return malformedKey(account.problem);
    // jose is loaded at the first token a Vertex AI key mints: a gateway without such a channel never needs it
    const { SignJWT, importPKCS8 } = await import('jose');
    let signingKey: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      signingKey = await importPKCS8(account.private_key, 'RS256');
    } catch (error) {
      return malformedKey(`its private_key cannot be read as an RSA PKCS#8 key (${(error as Error).message})`);
    }
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
      .setIssuer(account.client_email)
      .setAudience(account.token_uri)
      .setIssuedAt(now)
      .setExpirationTime(now + ASSERTION_LIFE_SECONDS)
      .sign(signingKey);
    return {
      url: account.token_uri,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
    };
  },
  parse(status, body) {
    const answer = parseJson(body) as
      { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer && typeof answer.error === 'string' && answer.error) {
      const description = typeof answer.error_description === 'string' ? answer.error_description : '';
      return upstreamFailure(
        status >= 400 ? status : 401,
        `Google refused the service-account token exchange: ${answer.error}${description ? `: ${description}` : ''}`,
        {
          type: 'google_oauth_error',
          code: answer.error,
          deadKey: DEAD_GRANT_ERRORS.has(answer.error),
          retryable: true,
        },
      );
    }
    if (status < 200 || status >= 300) {
      const text = body.trim().slice(0, 300);
      return upstreamFailure(status, `the service-account token exchange answered HTTP ${status}${text ? `: ${text}` : ''}`, {
        type: 'google_oauth_error',
        retryable: true,
      });
    }
    if (!answer || typeof answer.access_token !== 'string' || !answer.access_token) {
      return upstreamFailure(502, 'the service-account token exchange answered without an access_token', {
        type: 'google_oauth_error',
        retryable: true,
      });
    }
    return { credential: answer.access_token, expiresInSeconds: count(answer.expires_in) };
  },
};
