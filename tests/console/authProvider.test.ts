import { describe, expect, it, vi } from 'vitest';
import { HttpError } from 'react-admin';
import { canRoleAccess, createAuthProvider, mustEnrolElsewhere, needsSecondFactor } from '../../src/authProvider';

const user = { id: 3, username: 'amy', display_name: 'Amy', role: 1, status: 1 };

describe('authProvider', () => {
  it('login stores the returned user and sends the browser home', async () => {
    const login = vi.fn().mockResolvedValue(user);
    const provider = createAuthProvider({ login, logout: vi.fn(), loginSecondFactor: vi.fn() });
    expect(await provider.login({ username: 'amy', password: 'password-1' })).toEqual({ redirectTo: '/' });
    expect(login).toHaveBeenCalledWith({ username: 'amy', password: 'password-1' });
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(user);
  });

  it('two-factor sign-in: the password step stores nothing and rejects with two_factor_required; the code step stores the user', async () => {
    const refusal = new HttpError('app.server_message.two_factor_required', 200, {
      success: false,
      message: 'enter the code',
      code: 'two_factor_required',
    });
    const login = vi.fn().mockRejectedValue(refusal);
    const loginSecondFactor = vi.fn().mockResolvedValue(user);
    const provider = createAuthProvider({ login, logout: vi.fn(), loginSecondFactor });
    const rejected = await provider.login({ username: 'amy', password: 'password-1' }).catch((error: unknown) => error);
    expect(needsSecondFactor(rejected)).toBe(true);
    expect(needsSecondFactor(new HttpError('wrong', 200, { success: false, message: 'x', code: 'wrong_credentials' }))).toBe(false);
    expect(localStorage.getItem('user')).toBeNull();
    expect(await provider.login({ code: '123456' })).toEqual({ redirectTo: '/' });
    expect(loginSecondFactor).toHaveBeenCalledWith('123456');
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(user);
  });

  it('keeps an admin who must enrol in two-factor sign-in on /two-factor', async () => {
    const admin = { ...user, role: 10, two_factor_enrolment_required: true };
    const provider = createAuthProvider({ login: vi.fn().mockResolvedValue(admin), logout: vi.fn(), loginSecondFactor: vi.fn() });
    expect(await provider.login({ username: 'amy', password: 'password-1' })).toEqual({ redirectTo: '/two-factor' });
    // checkAuth passes (a refusal there would sign them out); the layout keeps them on /two-factor
    await expect(provider.checkAuth({})).resolves.toBeUndefined();
    expect(mustEnrolElsewhere('/channel')).toBe(true);
    expect(mustEnrolElsewhere('/two-factor')).toBe(false);
    localStorage.setItem('user', JSON.stringify({ ...admin, two_factor_enrolment_required: false }));
    expect(mustEnrolElsewhere('/channel')).toBe(false);
    // a refusal for the same reason (the requirement was turned on meanwhile) sends them there too, and remembers it
    const refusal = { status: 200, body: { success: false, message: 'set it up first', code: 'two_factor_enrolment_required' } };
    await expect(provider.checkError(refusal)).rejects.toMatchObject({ redirectTo: '/two-factor', logoutUser: false });
    expect(JSON.parse(localStorage.getItem('user')!).two_factor_enrolment_required).toBe(true);
  });

  it('checkAuth rejects to /login without a stored user', async () => {
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn(), loginSecondFactor: vi.fn() });
    await expect(provider.checkAuth({})).rejects.toMatchObject({ redirectTo: '/login' });
    await expect(provider.checkAuth({ route: 'dashboard' })).resolves.toBeUndefined();
    localStorage.setItem('user', JSON.stringify(user));
    await expect(provider.checkAuth({})).resolves.toBeUndefined();
  });

  it('checkError sends a 401 to /login?expired=true and forgets the user, but not a 403', async () => {
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn(), loginSecondFactor: vi.fn() });
    localStorage.setItem('user', JSON.stringify(user));
    await expect(provider.checkError({ status: 403 })).resolves.toBeUndefined();
    expect(localStorage.getItem('user')).not.toBeNull();
    await expect(provider.checkError({ status: 401 })).rejects.toMatchObject({ redirectTo: '/login?expired=true' });
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('logout calls the server, clears the user and goes to /login', async () => {
    const logout = vi.fn().mockResolvedValue(undefined);
    const provider = createAuthProvider({ login: vi.fn(), logout, loginSecondFactor: vi.fn() });
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
    const provider = createAuthProvider({ login: vi.fn(), logout: vi.fn(), loginSecondFactor: vi.fn() });
    localStorage.setItem('user', JSON.stringify({ ...user, role: 10 }));
    expect(await provider.canAccess!({ action: 'list', resource: 'channel' })).toBe(true);
  });
});
