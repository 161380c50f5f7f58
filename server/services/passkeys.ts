// The WebAuthn ceremonies behind passkeys, with @simplewebauthn/server: the
// options handed to the browser and the checks of what it sends back. Each
// ceremony's challenge is kept server-side (repositories/passkeys.ts) for a few
// minutes and spent by its first use, whether that use succeeds or not.
//
// The relying party (the site a passkey belongs to) is the configured server
// address (ServerAddress); without one, only a request to a loopback name
// (localhost) may use passkeys, for that address. Browsers refuse WebAuthn on an
// IP address, so 127.0.0.1 gets a message saying to use localhost instead.
//
// The signature counter is checked here rather than by the library, after the
// signature: a counter that does not grow (from an authenticator that keeps
// one) means two copies of one key, so the passkey is refused and the caller
// notes the event. The counter then moves by a compare-and-set on the row.
// Reference: https://www.w3.org/TR/webauthn-3/#sctn-sign-counter
import { randomBytes } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import {
  findPasskeyByCredentialId,
  insertPasskey,
  listPasskeys,
  recordPasskeyUse,
  storeChallenge,
  takeChallenge,
  userHandleOf,
  type PasskeyRow,
} from '../repositories/passkeys';

/** How long a ceremony's challenge may wait for its answer. */
export const CHALLENGE_TTL_SECONDS = 5 * 60;
/** What the browser is told to wait for the user. */
const CEREMONY_TIMEOUT_MS = 120_000;
/** Ed25519, ES256, RS256: what authenticators in use offer. */
const ALGORITHMS = [-8, -7, -257];

/** @simplewebauthn/server, loaded at the first passkey ceremony: most of a gateway's calls never need it. */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
let helpers: Promise<typeof import('@simplewebauthn/server/helpers')> | undefined;
const loadWebAuthn = () => (webauthn ??= import('@simplewebauthn/server'));
const loadHelpers = () => (helpers ??= import('@simplewebauthn/server/helpers'));

export interface RelyingParty {
  /** The domain passkeys are scoped to. */
  id: string;
  /** The origin the browser must report (scheme, host and port). */
  origin: string;
  /** The name an authenticator shows. */
  name: string;
}

/** What the relying party is derived from: the server address option, and the request's own address. */
export interface RequestAddress {
  serverAddress: string;
  protocol: string;
  /** Host and port, as the request named them. */
  host: string;
  hostname: string;
  systemName: string;
}

const isLoopbackName = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');
const isLoopbackAddress = (hostname: string) => /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '[::1]' || hostname === '::1';

/** The relying party for a request, or why passkeys cannot be used from where it came. */
export function relyingPartyOf(address: RequestAddress): RelyingParty | { problem: string } {
  const name = address.systemName || 'Switchboard';
  if (address.serverAddress) {
    let url: URL;
    try {
      url = new URL(address.serverAddress);
    } catch {
      return { problem: 'the server address setting is not a valid URL' };
    }
    return { id: url.hostname, origin: url.origin, name };
  }
  const hostname = address.hostname.toLowerCase();
  if (isLoopbackName(hostname)) return { id: hostname, origin: `${address.protocol}://${address.host.toLowerCase()}`, name };
  if (isLoopbackAddress(hostname)) {
    return { problem: 'browsers refuse passkeys on an IP address: open the console at http://localhost instead' };
  }
  return { problem: 'passkeys need the server address: root sets it under Setting → System' };
}

/** The challenge a response carries (its clientDataJSON's), or undefined when that is not readable. */
async function challengeOf(clientDataJSON: unknown): Promise<string | undefined> {
  if (typeof clientDataJSON !== 'string') return undefined;
  const { decodeClientDataJSON } = await loadHelpers();
  try {
    const challenge = decodeClientDataJSON(clientDataJSON).challenge;
    return typeof challenge === 'string' && challenge ? challenge : undefined;
  } catch {
    return undefined;
  }
}

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

/** The transports a browser reported that WebAuthn names; anything else is dropped, not stored. */
function knownTransports(reported: unknown): string[] {
  return Array.isArray(reported) ? reported.filter((transport): transport is string => TRANSPORTS.has(transport as string)) : [];
}

const transportsOf = (row: PasskeyRow) => (row.transports ? row.transports.split(',') : undefined);

/** Options for navigator.credentials.create(): a discoverable credential for the user, none they already have. */
export async function registrationOptions(
  db: Kysely<Database>,
  party: RelyingParty,
  user: { id: number; username: string; display_name: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await loadWebAuthn();
  // one handle per account, so an authenticator replaces its passkey for the account instead of keeping two
  const userHandle = (await userHandleOf(db, user.id)) ?? randomBytes(32).toString('base64url');
  const existing = await listPasskeys(db, user.id);
  const options = await generateRegistrationOptions({
    rpName: party.name,
    rpID: party.id,
    userName: user.username,
    userDisplayName: user.display_name || user.username,
    userID: new Uint8Array(Buffer.from(userHandle, 'base64url')),
    attestationType: 'none',
    timeout: CEREMONY_TIMEOUT_MS,
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await storeChallenge(db, options.challenge, { purpose: 'register', userId: user.id, userHandle }, CHALLENGE_TTL_SECONDS);
  return options;
}

export type RegistrationOutcome = { passkeyName: string } | { problem: string };

/** Checks a new credential against its challenge and the relying party, and stores it under `name`. */
export async function registerPasskey(
  db: Kysely<Database>,
  party: RelyingParty,
  userId: number,
  response: RegistrationResponseJSON,
  name: string,
): Promise<RegistrationOutcome> {
  const challenge = await challengeOf(response.response?.clientDataJSON);
  const held = challenge ? await takeChallenge(db, challenge, 'register') : undefined;
  if (!challenge || !held || held.userId !== userId) return { problem: 'the passkey request expired or was already used: try again' };
  const { verifyRegistrationResponse } = await loadWebAuthn();
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch {
    return { problem: 'the passkey could not be verified' };
  }
  if (!verified.verified) return { problem: 'the passkey could not be verified' };
  const { credential, credentialBackedUp } = verified.registrationInfo;
  const stored = await insertPasskey(db, {
    userId,
    credentialId: credential.id,
    userHandle: held.userHandle,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: knownTransports(response.response.transports),
    name,
    backedUp: credentialBackedUp,
  });
  return stored ? { passkeyName: name } : { problem: 'this passkey is already registered' };
}

/**
 * Options for navigator.credentials.get(). `userId` 0: a sign-in with a
 * passkey alone (any discoverable credential, user verification required);
 * otherwise the second step after a password, limited to that user's passkeys.
 */
export async function authenticationOptions(
  db: Kysely<Database>,
  party: RelyingParty,
  userId: number,
): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  const { generateAuthenticationOptions } = await loadWebAuthn();
  const own = userId === 0 ? [] : await listPasskeys(db, userId);
  if (userId !== 0 && own.length === 0) return undefined;
  const options = await generateAuthenticationOptions({
    rpID: party.id,
    timeout: CEREMONY_TIMEOUT_MS,
    allowCredentials: own.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
    userVerification: userId === 0 ? 'required' : 'preferred',
  });
  await storeChallenge(db, options.challenge, { purpose: 'login', userId }, CHALLENGE_TTL_SECONDS);
  return options;
}

export type AuthenticationOutcome =
  | { passkey: PasskeyRow }
  | { problem: 'challenge' | 'unknown' | 'other_user' | 'invalid' | 'raced' }
  | { problem: 'cloned'; passkey: PasskeyRow; counter: number };

/** The stored credential as the library takes it. */
function credentialOf(row: PasskeyRow) {
  // the counter is checked below, after the signature, so a forged answer cannot pass for a cloned key
  return {
    id: row.credential_id,
    publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
    counter: 0,
    transports: transportsOf(row),
  };
}

/** Checks an assertion: its challenge (handed to `userId`, 0 for a passkey alone), its passkey, signature and counter. */
export async function authenticate(
  db: Kysely<Database>,
  party: RelyingParty,
  userId: number,
  response: AuthenticationResponseJSON,
): Promise<AuthenticationOutcome> {
  const challenge = await challengeOf(response.response?.clientDataJSON);
  const held = challenge ? await takeChallenge(db, challenge, 'login') : undefined;
  if (!challenge || !held || held.userId !== userId) return { problem: 'challenge' };
  const passkey = typeof response.id === 'string' ? await findPasskeyByCredentialId(db, response.id) : undefined;
  if (!passkey) return { problem: 'unknown' };
  if (userId !== 0 && passkey.user_id !== userId) return { problem: 'other_user' };
  const userHandle = response.response.userHandle;
  if (userHandle && userHandle !== passkey.user_handle) return { problem: 'other_user' };
  const { verifyAuthenticationResponse } = await loadWebAuthn();
  let counter: number;
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: credentialOf(passkey),
      requireUserVerification: userId === 0,
    });
    if (!verified.verified) return { problem: 'invalid' };
    counter = verified.authenticationInfo.newCounter;
  } catch {
    return { problem: 'invalid' };
  }
  if ((counter > 0 || passkey.counter > 0) && counter <= passkey.counter) return { problem: 'cloned', passkey, counter };
  if (!(await recordPasskeyUse(db, passkey.id, passkey.counter, counter))) return { problem: 'raced' };
  return { passkey };
}
