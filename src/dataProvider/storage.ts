// The signed-in user as the console remembers it (localStorage `user`). The
// session itself is an HttpOnly cookie the console cannot read.
import type { SessionUser } from '../../common/records';

export const USER_STORAGE_KEY = 'user';

export function readStoredUser(): SessionUser | null {
  try {
    const raw = localStorage.getItem(USER_STORAGE_KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as SessionUser;
    return parsed && typeof parsed.role === 'number' ? parsed : null;
  } catch {
    return null;
  }
}

export function storeUser(user: SessionUser): void {
  localStorage.setItem(USER_STORAGE_KEY, JSON.stringify(user));
}

export function clearStoredUser(): void {
  localStorage.removeItem(USER_STORAGE_KEY);
}
