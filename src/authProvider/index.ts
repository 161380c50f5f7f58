// Sign-in, sign-out and role checks for react-admin. Roles: user >= 1,
// admin >= 10, root >= 100 (the server enforces the same on every route).
import type { AuthProvider } from 'react-admin';
import type { LoginPayload } from '../../common/records';
import { isAdmin, isRoot } from '../../common/roles';
import { dataProvider as defaultDataProvider, type SwitchboardDataProvider } from '../dataProvider';
import { clearStoredUser, readStoredUser, storeUser } from './storage';

/** Resources and settings areas only admins may open. */
export const ADMIN_RESOURCES = new Set(['channel', 'redemption', 'user', 'webhook', 'webhook_delivery', 'setting.operation', 'setting.system', 'setting.other']);
/** Things only root may change. */
export const ROOT_RESOURCES = new Set(['setting.topup_link']);

export function canRoleAccess(role: number | undefined, resource: string): boolean {
  if (ROOT_RESOURCES.has(resource)) return isRoot(role);
  if (ADMIN_RESOURCES.has(resource)) return isAdmin(role);
  return (role ?? 0) >= 1;
}

export function createAuthProvider(dataProvider: Pick<SwitchboardDataProvider, 'login' | 'logout'> = defaultDataProvider): AuthProvider {
  return {
    async login(params: LoginPayload) {
      const user = await dataProvider.login({ username: params.username, password: params.password });
      storeUser(user);
      return { redirectTo: '/' };
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
      if (!readStoredUser()) throw { redirectTo: '/login', message: false };
    },
    async checkError(error: { status?: number }) {
      if (error?.status === 401) {
        clearStoredUser();
        throw { redirectTo: '/login?expired=true', logoutUser: false, message: false };
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
