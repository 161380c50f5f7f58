// The console API's account calls, typed: the site's content, signing in and out (passwords,
// two-factor codes, GitHub and WeChat), registration, and the caller's own account (profile,
// keys, top-up, access token, e-mail binding, invitation code), with an admin's manageUser.
// Each method's URL is in the map atop index.ts.
import type { Identifier } from 'react-admin';
import type { ClientStatus } from '../../common/options';
import type { ListedModelPrice } from '../../common/pricing';
import type { LoginPayload, RegisterPayload, SessionUser, TwoFactorEnrolment, TwoFactorStatus, UserRecord } from '../../common/records';
import { endpoints } from './endpoints';
import type { HttpClient } from './httpClient';

/** The site's content, sign-in (two-factor, OAuth included), sign-out and registration. */
export function sessionCalls(httpClient: HttpClient) {
  return {
    getStatus: async () => (await httpClient<ClientStatus>(endpoints.status)).data as ClientStatus,
    getNotice: async () => (await httpClient<string>(endpoints.notice)).data ?? '',
    getAbout: async () => (await httpClient<string>(endpoints.about)).data ?? '',
    getHomePageContent: async () => (await httpClient<string>(endpoints.homePageContent)).data ?? '',
    login: async (payload: LoginPayload) =>
      (await httpClient<SessionUser>(endpoints.login, { method: 'POST', body: payload })).data as SessionUser,
    logout: async () => {
      await httpClient(endpoints.logout);
    },
    loginSecondFactor: async (code: string) =>
      (await httpClient<SessionUser & { recovery_codes_left?: number }>(endpoints.loginSecondFactor, { method: 'POST', body: { code } }))
        .data as SessionUser & {
        recovery_codes_left?: number;
      },
    twoFactorStatus: async () => (await httpClient<TwoFactorStatus>(endpoints.twoFactor)).data as TwoFactorStatus,
    twoFactorEnrol: async () =>
      (await httpClient<TwoFactorEnrolment>(endpoints.twoFactorEnrol, { method: 'POST' })).data as TwoFactorEnrolment,
    twoFactorConfirm: async (code: string) =>
      (await httpClient<{ recovery_codes: string[] }>(endpoints.twoFactorConfirm, { method: 'POST', body: { code } })).data
        ?.recovery_codes ?? [],
    twoFactorDisable: async (code: string) => {
      await httpClient(endpoints.twoFactorDisable, { method: 'POST', body: { code } });
    },
    userTwoFactor: async (id: Identifier) =>
      (await httpClient<{ enabled: boolean; recovery_codes_left: number; passkeys?: number }>(endpoints.userTwoFactor(id))).data as {
        enabled: boolean;
        recovery_codes_left: number;
        /** How many passkeys the user has (the reset removes them too). */
        passkeys?: number;
      },
    resetUserTwoFactor: async (id: Identifier) => {
      await httpClient(endpoints.userTwoFactorReset(id), { method: 'POST' });
    },
    register: async (payload: RegisterPayload, turnstile?: string) => {
      await httpClient(endpoints.register(turnstile), { method: 'POST', body: payload });
    },
  };
}

/** The caller's own account, a token's or code's full key, top-up, and an admin's manageUser. */
export function accountCalls(httpClient: HttpClient) {
  return {
    getSelf: async () => (await httpClient<UserRecord>(endpoints.self)).data as UserRecord,
    /** The models of the caller's group (a visitor's: the default group's, when prices are public) with their prices in US$ per million tokens and endpoints. */
    getPricing: async () => (await httpClient<ListedModelPrice[]>(endpoints.pricing)).data ?? [],
    updateSelf: async (changes: { username?: string; display_name?: string; password?: string; original_password?: string }) => {
      await httpClient(endpoints.self, { method: 'PUT', body: changes });
    },
    deleteSelf: async () => {
      await httpClient(endpoints.self, { method: 'DELETE' });
    },
    sendVerificationCode: async (email: string, turnstile?: string) => {
      await httpClient(endpoints.verification(email, turnstile));
    },
    sendPasswordReset: async (email: string, turnstile?: string) => {
      await httpClient(endpoints.resetPassword(email, turnstile));
    },
    confirmPasswordReset: async (email: string, token: string) =>
      (await httpClient<string>(endpoints.confirmReset, { method: 'POST', body: { email, token } })).data ?? '',
    /** A one-time `state` for the GitHub authorize URL (also kept in an HttpOnly cookie). */
    getOAuthState: async () => (await httpClient<string>(endpoints.oauthState)).data ?? '',
    wechatBind: async (code: string) => {
      await httpClient(endpoints.wechatBind(code));
    },
    githubOAuth: async (code: string, state: string) => {
      const envelope = await httpClient<SessionUser>(endpoints.githubOAuth(code, state));
      return { message: envelope.message, user: envelope.data };
    },
    /** The provider's authorization URL for single sign-on (its state, nonce and PKCE verifier stay in an HttpOnly cookie). */
    startOidc: async () => (await httpClient<string>(endpoints.oidcStart)).data ?? '',
    /** Finishes single sign-on with the provider's answer (code, state, iss, or its error) as the callback page got it. */
    oidcOAuth: async (answer: Record<string, string | undefined>) =>
      (await httpClient<SessionUser>(endpoints.oidcOAuth(answer))).data as SessionUser,
    wechatLogin: async (code: string) => (await httpClient<SessionUser>(endpoints.wechatOAuth(code))).data as SessionUser,
    /** The full key of a token or redemption code (lists only carry masked keys). */
    revealKey: async (resource: 'token' | 'redemption', id: string | number) =>
      (await httpClient<string>(endpoints.secretKey(resource, id))).data ?? '',
    /** Redeems a code; resolves to the quota added. */
    topUp: async (key: string) => Number((await httpClient<number>(endpoints.topUp, { method: 'POST', body: { key } })).data ?? 0),
    manageUser: async (username: string, action: 'promote' | 'demote' | 'delete' | 'enable' | 'disable') =>
      (
        await httpClient<{ role: number; status: number; deleted?: boolean }>(endpoints.manageUser, {
          method: 'POST',
          body: { username, action },
        })
      ).data!,
    generateAccessToken: async () => (await httpClient<string>(endpoints.accessToken)).data ?? '',
    bindEmail: async (email: string, code: string) => {
      await httpClient(endpoints.bindEmail(email, code));
    },
    getAffCode: async () => (await httpClient<string>(endpoints.affCode)).data ?? '',
  };
}
