// Sign-in, sign-out and role checks for react-admin. Roles: user >= 1,
// admin >= 10, root >= 100 (the server enforces the same on every route).
//
// Two-factor sign-in: login() with a password may reject with the server's
// `two_factor_required` (the login page then asks for the code and calls
// login() again with `{ code }`); nothing is stored until the code step
// succeeds; `{ passkey: true }` signs in with a passkey instead, alone or as
// that second step. An account that must still set up a second factor
// (TwoFactorRequiredForAdmins, SecondFactorRequired) is sent to /two-factor,
// and the layout and every such refusal send them back there until done.
import type { AuthProvider } from 'react-admin';
import type { LoginPayload, SecondFactor, SecondFactorChoice } from '../../common/records';
import { isAdmin, isRoot } from '../../common/roles';
import { dataProvider as defaultDataProvider, type SwitchboardDataProvider } from '../dataProvider';
import { clearStoredUser, readStoredUser, storeUser } from '../dataProvider/storage';

/** Resources and settings areas only admins may open. */
export const ADMIN_RESOURCES = new Set([
  'channel',
  'redemption',
  'user',
  'webhook',
  'webhook_delivery',
  'setting.operation',
  'setting.system',
  'setting.other',
]);
/** Things only root may change. */
export const ROOT_RESOURCES = new Set(['setting.topup_link']);

export function canRoleAccess(role: number | undefined, resource: string): boolean {
  if (ROOT_RESOURCES.has(resource)) return isRoot(role);
  if (ADMIN_RESOURCES.has(resource)) return isAdmin(role);
  return (role ?? 0) >= 1;
}

/** Where an admin who must enrol in two-factor sign-in is kept. */
export const TWO_FACTOR_SETUP_PATH = '/two-factor';

/** The second sign-in step: a TOTP or recovery code. */
export interface SecondFactorPayload {
  code: string;
}

/** Sign-in with a passkey: alone, or as the second step (the server tells which by the session). */
export interface PasskeyPayload {
  passkey: true;
}

/** True when a refusal is the server's `two_factor_required` (password right, code still due). */
export const needsSecondFactor = (error: unknown) => (error as { body?: { code?: string } })?.body?.code === 'two_factor_required';

/** The factors that can finish the second step, when the refusal names them (a passkey can); undefined when it does not. */
export const secondFactorsOf = (error: unknown): SecondFactor[] | undefined =>
  (error as { body?: { data?: Partial<SecondFactorChoice> } })?.body?.data?.second_factors;

/** The sign-in calls the provider makes; the passkey one is optional for callers that offer no passkeys. */
type SignInCalls = Pick<SwitchboardDataProvider, 'login' | 'logout' | 'loginSecondFactor'> &
  Partial<Pick<SwitchboardDataProvider, 'loginWithPasskey'>>;

async function signIn(dataProvider: SignInCalls, params: LoginPayload | SecondFactorPayload | PasskeyPayload) {
  if ('passkey' in params) {
    if (!dataProvider.loginWithPasskey) throw new Error('passkey.browser_failed');
    return dataProvider.loginWithPasskey();
  }
  if ('code' in params) return dataProvider.loginSecondFactor(params.code);
  return dataProvider.login({ username: params.username, password: params.password });
}

export function createAuthProvider(dataProvider: SignInCalls = defaultDataProvider): AuthProvider {
  return {
    async login(params: LoginPayload | SecondFactorPayload | PasskeyPayload) {
      const user = await signIn(dataProvider, params);
      storeUser(user);
      return { redirectTo: user.two_factor_enrolment_required ? TWO_FACTOR_SETUP_PATH : '/' };
    },
    async logout() {
      const hadUser = readStoredUser() !== null;
      clearStoredUser();
      if (hadUser) {
        try {
          await dataProvider.logout();
        } catch {
          // the cookie is cleared server-side when reachable; locally we are signed out either way
        }
      }
      return '/login';
    },
    async checkAuth(params?: { route?: string }) {
      // the home page (react-admin's dashboard) is public
      if (params?.route === 'dashboard') return;
      // an admin who must still enrol passes: react-admin signs out on any checkAuth refusal, so the layout
      // (useTwoFactorGate) keeps them on /two-factor instead
      if (!readStoredUser()) throw { redirectTo: '/login', message: false };
    },
    async checkError(error: { status?: number; body?: { code?: string } }) {
      if (error?.status === 401) {
        clearStoredUser();
        throw { redirectTo: '/login?expired=true', logoutUser: false, message: false };
      }
      if (error?.body?.code === 'two_factor_enrolment_required') {
        const user = readStoredUser();
        if (user) storeUser({ ...user, two_factor_enrolment_required: true });
        throw { redirectTo: TWO_FACTOR_SETUP_PATH, logoutUser: false, message: false };
      }
    },
    async getIdentity() {
      const user = readStoredUser();
      if (!user) throw new Error('not signed in');
      return { id: user.id, fullName: user.display_name || user.username, username: user.username, role: user.role };
    },
    async getPermissions() {
      return readStoredUser()?.role ?? 0;
    },
    async canAccess({ resource }: { resource: string; action: string }) {
      return canRoleAccess(readStoredUser()?.role, resource);
    },
  };
}

export const authProvider = createAuthProvider();

/**
 * True while the signed-in admin must enrol in two-factor sign-in and is on
 * another page: the layout then shows nothing and goes to /two-factor.
 */
export function mustEnrolElsewhere(pathname: string): boolean {
  return Boolean(readStoredUser()?.two_factor_enrolment_required) && pathname !== TWO_FACTOR_SETUP_PATH && pathname !== '/login';
}
