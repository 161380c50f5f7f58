// A real OpenID provider for the suites: oidc-provider on 127.0.0.1 at a free
// port, one static confidential client, a few fixed accounts (one with a
// groups claim), and an interaction that signs in whichever account the test
// names, and consents, with no form. It can also send back an ID token with a
// wrong audience or one already expired, re-signed with its own key, so what
// the gateway refuses is the claim alone, never the signature.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// oidc-provider ships no types: the part of it used here
interface KoaContext {
  path: string;
  body: unknown;
}

interface InteractionDetails {
  prompt: { name: string; details: { missingOIDCScope?: string[]; missingOIDCClaims?: string[] } };
  params: Record<string, unknown>;
  session?: { accountId: string };
}

interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  save(): Promise<string>;
}

interface Provider {
  Grant: new (properties: { accountId: string; clientId: string }) => Grant;
  use(middleware: (context: KoaContext, next: () => Promise<void>) => Promise<void>): Provider;
  callback(): (request: IncomingMessage, response: ServerResponse) => void;
  interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    request: IncomingMessage,
    response: ServerResponse,
    result: Record<string, unknown>,
    options: { mergeWithLastSubmission: boolean },
  ): Promise<void>;
}

type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => Provider;

/** The package by a specifier TypeScript does not resolve, so its missing types are ours above. */
const PACKAGE = 'oidc-provider';

export interface OidcAccount {
  email: string;
  email_verified: boolean;
  name: string;
  preferred_username: string;
  groups: string[];
}

/** The accounts the provider knows, by subject. */
export const OIDC_ACCOUNTS: Record<string, OidcAccount> = {
  'sub-alice': { email: 'alice@example.com', email_verified: true, name: 'Alice Example', preferred_username: 'alice', groups: ['staff'] },
  'sub-dave': {
    email: 'dave@example.com',
    email_verified: true,
    name: 'Dave Admin',
    preferred_username: 'dave',
    groups: ['staff', 'gw-admins'],
  },
  'sub-carol': { email: 'carol@example.com', email_verified: true, name: 'Carol Linked', preferred_username: 'carol', groups: [] },
  'sub-mallory': {
    email: 'carol@example.com',
    email_verified: false,
    name: 'Mallory Unverified',
    preferred_username: 'mallory',
    groups: [],
  },
  'sub-erin': { email: 'erin@example.com', email_verified: true, name: 'Erin Banned', preferred_username: 'erin', groups: [] },
  'sub-frank': { email: 'frank@example.com', email_verified: true, name: 'Frank Sso', preferred_username: 'frank', groups: [] },
};

/** What the token endpoint's ID token gets wrong on purpose, or nothing. */
export type IdTokenTamper = 'audience' | 'expired' | 'signature' | undefined;

export interface RunningOidcProvider {
  issuer: string;
  wellKnown: string;
  clientId: string;
  clientSecret: string;
  /** The account the next interaction signs in. */
  signInAs(subject: string): void;
  tamperIdToken(how: IdTokenTamper): void;
  close(): Promise<void>;
}

const CLIENT_ID = 'switchboard-test';
const CLIENT_SECRET = 'switchboard-test-secret-0123456789';

/** The ID token with its payload changed, signed again with the provider's key (or not, for `signature`). */
function tampered(idToken: string, how: Exclude<IdTokenTamper, undefined>, key: KeyObject): string {
  const [header, payloadPart, signature] = idToken.split('.');
  const payload = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  if (how === 'audience') payload.aud = 'another-client';
  if (how === 'expired') Object.assign(payload, { iat: now - 7200, exp: now - 3600 });
  if (how === 'signature') payload.sub = 'sub-someone-else';
  const body = `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  if (how === 'signature') return `${body}.${signature}`;
  return `${body}.${sign('sha256', Buffer.from(body), key).toString('base64url')}`;
}

/** Finishes the login prompt as `subject`, and the consent prompt with every scope and claim asked for. */
async function interact(provider: Provider, request: IncomingMessage, response: ServerResponse, subject: string): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(request, response, { login: { accountId: subject } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = new provider.Grant({ accountId: details.session?.accountId ?? subject, clientId: String(details.params.client_id) });
  const missing = details.prompt.details;
  if (Array.isArray(missing.missingOIDCScope)) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (Array.isArray(missing.missingOIDCClaims)) grant.addOIDCClaims(missing.missingOIDCClaims);
  const grantId = await grant.save();
  await provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

function configuration(redirectUris: string[], jwk: Record<string, unknown>): Record<string, unknown> {
  return {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username', 'groups'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_context: KoaContext, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_context: KoaContext, subject: string) => {
      const account = OIDC_ACCOUNTS[subject];
      if (!account) return undefined;
      return { accountId: subject, claims: () => ({ sub: subject, ...account }) };
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  };
}

/** Starts the provider; `redirectUris` are the client's (the gateway's /oauth/oidc page). */
export async function startOidcProvider(redirectUris: string[]): Promise<RunningOidcProvider> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let subject = 'sub-alice';
  let tamper: IdTokenTamper;
  // the server must listen (its port names the issuer) before the provider it serves exists
  const mounted: { provider?: Provider; handler?: (request: IncomingMessage, response: ServerResponse) => void } = {};
  const server: Server = createServer((request, response) => {
    if (mounted.provider && request.url?.startsWith('/interaction/')) {
      interact(mounted.provider, request, response, subject).catch((error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      });
      return;
    }
    mounted.handler?.(request, response);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { default: ProviderOf } = (await import(PACKAGE)) as { default: ProviderClass };
  const provider = new ProviderOf(issuer, configuration(redirectUris, jwk));
  provider.use(async (context, next) => {
    await next();
    const body = context.body as { id_token?: unknown } | undefined;
    if (tamper && context.path === '/token' && typeof body?.id_token === 'string')
      context.body = { ...body, id_token: tampered(body.id_token, tamper, privateKey) };
  });
  mounted.provider = provider;
  mounted.handler = provider.callback();
  return {
    issuer,
    wellKnown: `${issuer}/.well-known/openid-configuration`,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    signInAs: (next) => {
      subject = next;
    },
    tamperIdToken: (how) => {
      tamper = how;
    },
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

/**
 * Follows the provider's redirects from its authorization URL, as a browser
 * with a fresh cookie jar would, until it sends the browser back to `back`
 * (the gateway's /oauth/oidc page); the URL it sent it to.
 */
export async function followProviderTo(authorizationUrl: string, back: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  for (let hop = 0; hop < 20; hop += 1) {
    if (url.startsWith(back)) return new URL(url);
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(';')[0];
      const name = pair.slice(0, pair.indexOf('='));
      if (/expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
      else jar.set(name, pair.slice(pair.indexOf('=') + 1));
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${url} with ${response.status}: ${await response.text()}`);
    url = new URL(location, url).href;
  }
  throw new Error('the provider redirected more than 20 times');
}
