// A WebAuthn authenticator in software, for the server suites: it answers the
// options the gateway hands out as a browser and a platform authenticator
// would, with ES256 keys from node:crypto. Registration uses attestation
// "none"; each credential is discoverable (it keeps its user handle) and keeps
// a signature counter, which a test may set to play a cloned key.
// Reference: https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_CREDENTIAL = 0x40;

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const base64url = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url');

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

/** The public key as COSE (RFC 9053): EC2, ES256, P-256, x and y. */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  );
}

export interface StoredCredential {
  id: string;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
}

export interface AssertionChoices {
  /** The credential to answer with (default: the first the options allow, or the first for the relying party). */
  credentialId?: string;
  /** The counter to report (default: one more than the last). */
  counter?: number;
  /** Whether the user was verified (default true). */
  userVerified?: boolean;
}

export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];

  /** `origin`: what the browser would put in clientDataJSON (scheme, host, port). */
  constructor(readonly origin: string) {}

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(): a new ES256 credential, with attestation "none". */
  create(options: PublicKeyCredentialCreationOptionsJSON): RegistrationResponseJSON {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credentialId = randomBytes(32);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_USER_PRESENT | FLAG_USER_VERIFIED | FLAG_ATTESTED_CREDENTIAL]),
      counterBytes(0),
      Buffer.alloc(16), // AAGUID: none, as software authenticators give
      idLength,
      credentialId,
      Buffer.from(coseKey(publicKey)),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    const id = base64url(credentialId);
    this.credentials.push({ id, rpId, userHandle: options.user.id, privateKey, counter: 0 });
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: base64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: base64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private pick(options: PublicKeyCredentialRequestOptionsJSON, credentialId?: string): StoredCredential {
    const allowed = (options.allowCredentials ?? []).map((descriptor) => descriptor.id);
    const found = this.credentials.find(
      (stored) =>
        (credentialId === undefined || stored.id === credentialId) &&
        (credentialId !== undefined || allowed.length === 0 || allowed.includes(stored.id)),
    );
    if (!found) throw new Error('no credential of this authenticator fits the options');
    return found;
  }

  /** navigator.credentials.get(): an assertion signed with the credential's key. */
  get(options: PublicKeyCredentialRequestOptionsJSON, choices: AssertionChoices = {}): AuthenticationResponseJSON {
    const stored = this.pick(options, choices.credentialId);
    stored.counter = choices.counter ?? stored.counter + 1;
    const flags = FLAG_USER_PRESENT | (choices.userVerified === false ? 0 : FLAG_USER_VERIFIED);
    const authData = Buffer.concat([sha256(options.rpId ?? stored.rpId), Buffer.from([flags]), counterBytes(stored.counter)]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), { key: stored.privateKey, dsaEncoding: 'der' });
    return {
      id: stored.id,
      rawId: stored.id,
      type: 'public-key',
      response: {
        clientDataJSON: base64url(clientDataJSON),
        authenticatorData: base64url(authData),
        signature: base64url(signature),
        userHandle: stored.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
