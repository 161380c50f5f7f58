// Single sign-on through an OpenID Connect provider, with openid-client: the
// provider's metadata from its discovery document (the endpoint options, when
// set, override it), the authorization URL with state, nonce and PKCE, and the
// code exchanged for the ID token's claims, which the library verifies
// (signature, issuer, audience, expiry, nonce), joined by the userinfo claims.
// Reference: https://openid.net/specs/openid-connect-core-1_0.html#CodeFlowAuth
import * as client from 'openid-client';
import type { OptionStore } from './optionStore';

/** What the browser must bring back to finish: sealed into a cookie by the route, never shown to the provider. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  /** Unix seconds; a pending sign-in older than PENDING_TTL_SECONDS is refused. */
  createdAt: number;
}

/** The provider's answer as the console's callback page passes it on. */
export interface CallbackParams {
  code?: string;
  state?: string;
  iss?: string;
  error?: string;
  error_description?: string;
}

/** The verified claims of the signed-in person, with the issuer that vouches for them. */
export interface VerifiedClaims {
  issuer: string;
  claims: Record<string, unknown>;
}

/** A refusal worth telling the person signing in (and the operator, in the log). */
export class OidcError extends Error {}

export const PENDING_TTL_SECONDS = 10 * 60;
/** Discovery is repeated at most this often per node; a changed option starts afresh at once. */
const CONFIGURATION_TTL_MS = 10 * 60 * 1000;
const HTTP_TIMEOUT_SECONDS = 8;

/** What password sign-in, registration and the other providers answer under OidcOnly. */
export const SSO_REQUIRED = 'sign-in is through single sign-on only: use the single sign-on button';

/** Everyone but root signs in through the provider: OidcOnly counts only while sign-in through it is on. */
export function ssoOnly(options: Pick<OptionStore, 'bool'>): boolean {
  return options.bool('OidcEnabled') && options.bool('OidcOnly');
}

function isLoopback(url: URL): boolean {
  const host = url.hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A URL option, or undefined when empty; plain HTTP only to a loopback provider (tests, a local Keycloak). */
function endpointOf(name: string, value: string): URL | undefined {
  if (!value.trim()) return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new OidcError(`single sign-on is misconfigured: ${name} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url)))
    throw new OidcError(`single sign-on is misconfigured: ${name} must be an https:// address`);
  return url;
}

/**
 * Why the library refused: the provider's own words when it answered with an OAuth error (invalid_grant...), else
 * the check that failed (openid-client's message is a category; the precise one, naming the claim, is its cause).
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { error: code, error_description: description } = error as Error & { error?: unknown; error_description?: unknown };
  if (typeof code === 'string') return `${code}${typeof description === 'string' ? ` (${description})` : ''}`;
  return error.cause instanceof Error ? error.cause.message : error.message;
}

/** The client authentication the provider takes: client_secret_basic unless it lists only client_secret_post. */
function authenticationFor(metadata: client.ServerMetadata, secret: string): client.ClientAuth {
  if (!secret) return client.None();
  const methods = metadata.token_endpoint_auth_methods_supported;
  const postOnly = Array.isArray(methods) && methods.includes('client_secret_post') && !methods.includes('client_secret_basic');
  return postOnly ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
}

/** The ID token algorithm to expect: RS256 (the default) unless the provider signs with others only. */
function idTokenAlgorithmOf(metadata: client.ServerMetadata): string {
  const algorithms = metadata.id_token_signing_alg_values_supported;
  if (!Array.isArray(algorithms) || algorithms.length === 0 || algorithms.includes('RS256')) return 'RS256';
  return algorithms.find((algorithm) => algorithm !== 'none') ?? 'RS256';
}

/** One node's client for the configured provider: discovery is cached until an option it read changes. */
export class OidcClient {
  private cached?: { key: string; configuration: client.Configuration; expiresAt: number };

  constructor(private readonly options: Pick<OptionStore, 'get'>) {}

  private settings() {
    const get = (key: Parameters<OptionStore['get']>[0]) => this.options.get(key).trim();
    return {
      wellKnown: get('OidcWellKnown'),
      clientId: get('OidcClientId'),
      clientSecret: get('OidcClientSecret'),
      authorization: get('OidcAuthorizationEndpoint'),
      token: get('OidcTokenEndpoint'),
      userinfo: get('OidcUserinfoEndpoint'),
    };
  }

  private async configuration(): Promise<client.Configuration> {
    const settings = this.settings();
    const key = JSON.stringify(settings);
    if (this.cached?.key === key && this.cached.expiresAt > Date.now()) return this.cached.configuration;
    if (!settings.clientId) throw new OidcError('single sign-on is misconfigured: the client id is missing');
    const wellKnown = endpointOf('the discovery URL', settings.wellKnown);
    if (!wellKnown) throw new OidcError('single sign-on is misconfigured: the discovery URL is missing');
    const overrides = {
      authorization_endpoint: endpointOf('the authorization endpoint', settings.authorization)?.href,
      token_endpoint: endpointOf('the token endpoint', settings.token)?.href,
      userinfo_endpoint: endpointOf('the userinfo endpoint', settings.userinfo)?.href,
    };
    const insecure = wellKnown.protocol === 'http:';
    let discovered: client.Configuration;
    try {
      discovered = await client.discovery(wellKnown, settings.clientId, undefined, undefined, {
        execute: insecure ? [client.allowInsecureRequests] : [],
        timeout: HTTP_TIMEOUT_SECONDS,
      });
    } catch (error) {
      throw new OidcError(`cannot read the provider's discovery document: ${reasonOf(error)}`);
    }
    // the spread keeps the metadata's own fields and drops openid-client's helper methods
    const metadata: client.ServerMetadata = { ...discovered.serverMetadata() };
    for (const [name, value] of Object.entries(overrides)) if (value) Object.assign(metadata, { [name]: value });
    const configuration = new client.Configuration(
      metadata,
      settings.clientId,
      { id_token_signed_response_alg: idTokenAlgorithmOf(metadata) },
      authenticationFor(metadata, settings.clientSecret),
    );
    configuration.timeout = HTTP_TIMEOUT_SECONDS;
    if (insecure) client.allowInsecureRequests(configuration);
    // the ID token's signature is checked against the provider's keys, not only trusted for arriving over TLS
    client.enableNonRepudiationChecks(configuration);
    this.cached = { key, configuration, expiresAt: Date.now() + CONFIGURATION_TTL_MS };
    return configuration;
  }

  /** The provider's authorization URL for a new sign-in, and what must come back with its answer. */
  async start(redirectUri: string, scopes: string): Promise<{ url: string; pending: PendingSignIn }> {
    const configuration = await this.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      redirectUri,
      createdAt: Math.floor(Date.now() / 1000),
    };
    const scopeList = scopes.split(/\s+/).filter(Boolean);
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: (scopeList.includes('openid') ? scopeList : ['openid', ...scopeList]).join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending };
  }

  /** The code exchanged (with the PKCE verifier) for verified claims; the userinfo endpoint's fill in the rest. */
  async finish(pending: PendingSignIn, params: CallbackParams): Promise<VerifiedClaims> {
    if (params.error) throw new OidcError(`the provider refused the sign-in: ${params.error_description || params.error}`);
    const configuration = await this.configuration();
    const current = new URL(pending.redirectUri);
    for (const name of ['code', 'state', 'iss'] as const) {
      const value = params[name];
      if (value) current.searchParams.set(name, value);
    }
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new OidcError(`the provider's answer was refused: ${reasonOf(error)}`);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new OidcError('the provider sent no ID token');
    let userinfo: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        userinfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
      } catch (error) {
        throw new OidcError(`cannot read the provider's userinfo: ${reasonOf(error)}`);
      }
    }
    // the ID token's own claims (issuer, subject, audience) win over the userinfo answer's
    return { issuer: idClaims.iss, claims: { ...userinfo, ...idClaims } };
  }
}
