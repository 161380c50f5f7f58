// The console API's passkey calls, typed: the caller's passkeys (list, add,
// remove) and sign-in with one. Adding and signing in are two requests around
// the browser's WebAuthn ceremony (@simplewebauthn/browser, loaded when first
// needed so the login page does not carry it). Each method's URL is in the map
// atop index.ts.
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import type { PasskeyRecord, SessionUser } from '../../common/records';
import { endpoints } from './endpoints';
import type { HttpClient } from './httpClient';

const loadBrowser = () => import('@simplewebauthn/browser');

/**
 * The browser's refusal as a message key the screens translate: the user
 * cancelled (or let it time out), the authenticator already holds a passkey of
 * this account, or anything else the browser reports.
 */
export function ceremonyError(error: unknown): Error {
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' || name === 'InvalidStateError') return new Error('passkey.already_registered');
  if (code === 'ERROR_CEREMONY_ABORTED' || name === 'NotAllowedError' || name === 'AbortError') return new Error('passkey.cancelled');
  return new Error('passkey.browser_failed');
}

/** Whether this browser offers WebAuthn at all (no passkey button where it cannot work). */
export function browserHasPasskeys(): boolean {
  return typeof window !== 'undefined' && typeof window.PublicKeyCredential === 'function';
}

export function passkeyCalls(httpClient: HttpClient) {
  return {
    listPasskeys: async () => (await httpClient<PasskeyRecord[]>(endpoints.passkeys)).data ?? [],
    /** Runs the registration ceremony and stores the new passkey under `name`; resolves to the caller's passkeys. */
    addPasskey: async (name: string) => {
      const optionsJSON = (await httpClient<PublicKeyCredentialCreationOptionsJSON>(endpoints.passkeyRegisterOptions, { method: 'POST' }))
        .data as PublicKeyCredentialCreationOptionsJSON;
      const { startRegistration } = await loadBrowser();
      const credential = await startRegistration({ optionsJSON }).catch((error: unknown) => {
        throw ceremonyError(error);
      });
      return (
        (await httpClient<PasskeyRecord[]>(endpoints.passkeyRegisterVerify, { method: 'POST', body: { name, credential } })).data ?? []
      );
    },
    removePasskey: async (id: number) => {
      await httpClient(endpoints.passkey(id), { method: 'DELETE' });
    },
    /** Signs in with a passkey: alone, or as the second step after a password (the server tells by the session). */
    loginWithPasskey: async () => {
      const optionsJSON = (await httpClient<PublicKeyCredentialRequestOptionsJSON>(endpoints.passkeyLoginOptions, { method: 'POST' }))
        .data as PublicKeyCredentialRequestOptionsJSON;
      const { startAuthentication } = await loadBrowser();
      const credential = await startAuthentication({ optionsJSON }).catch((error: unknown) => {
        throw ceremonyError(error);
      });
      return (await httpClient<SessionUser>(endpoints.passkeyLoginVerify, { method: 'POST', body: { credential } })).data as SessionUser;
    },
  };
}
