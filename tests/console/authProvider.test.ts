import { describe, expect, it, vi } from 'vitest';
import { canRoleAccess, createAuthProvider } from '../../src/authProvider';

const user = { id: 3, username: 'amy', display_name: 'Amy', role: 1, status: 1 };

describe('authProvider', () => {
  it('login stores the returned user and sends the browser home', async () => {
    const login = vi.fn().mockResolvedValue(user);
    const provider = createAuthProvider({ login, logout: vi.fn() });
    expect(await provider.login({ username: 'amy', password: 'password-1' })).toEqual({ redirectTo: '/' });
    expect(login).toHaveBeenCalledWith({ username: 'amy', password: 'password-1' });
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(user);
  });

  it('checkAuth rejects to /login without a stored user', async () => {
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn() });
    await expect(provider.checkAuth({})).rejects.toMatchObject({ redirectTo: '/login' });
    await expect(provider.checkAuth({ route: 'dashboard' })).resolves.toBeUndefined();
    localStorage.setItem('user', JSON.stringify(user));
    await expect(provider.checkAuth({})).resolves.toBeUndefined();
  });

  it('checkError sends a 401 to /login?expired=true and forgets the user, but not a 403', async () => {
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn() });
    localStorage.setItem('user', JSON.stringify(user));
    await expect(provider.checkError({ status: 403 })).resolves.toBeUndefined();
    expect(localStorage.getItem('user')).not.toBeNull();
    await expect(provider.checkError({ status: 401 })).rejects.toMatchObject({ redirectTo: '/login?expired=true' });
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('logout calls the server, clears the user and goes to /login', async () => {
    const logout = vi.fn().mockResolvedValue(undefined);
    const provider = createAuthProvider({ login: vi.fn(), logout });
    localStorage.setItem('user', JSON.stringify(user));
    expect(await provider.logout({})).toBe('/login');
    expect(logout).toHaveBeenCalledOnce();
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('canAccess follows the roles: admin areas need 10, the top-up link needs root', async () => {
    expect(canRoleAccess(1, 'token')).toBe(true);
    expect(canRoleAccess(1, 'log')).toBe(true);
    for (const resource of ['channel', 'redemption', 'user', 'setting.system']) {
      expect(canRoleAccess(1, resource)).toBe(false);
      expect(canRoleAccess(10, resource)).toBe(true);
    }
    expect(canRoleAccess(10, 'setting.topup_link')).toBe(false);
    expect(canRoleAccess(100, 'setting.topup_link')).toBe(true);
    expect(canRoleAccess(undefined, 'token')).toBe(false);
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn() });
    localStorage.setItem('user', JSON.stringify({ ...user, role: 10 }));
    expect(await provider.canAccess!({ action: 'list', resource: 'channel' })).toBe(true);
  });
});
