/** Role numbers stored on users. Checks always use `>=`. */
export const Role = {
  guest: 0,
  user: 1,
  admin: 10,
  root: 100,
} as const;
export type RoleValue = (typeof Role)[keyof typeof Role];

/** users.status */
export const UserStatus = { enabled: 1, disabled: 2 } as const;
/** tokens.status */
export const TokenStatus = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;
/** redemptions.status */
export const RedemptionStatus = { unused: 1, disabled: 2, used: 3 } as const;
/** channels.status */
export const ChannelStatus = { unknown: 0, enabled: 1, disabled: 2 } as const;
/** logs.type; `error` (5, as new-api numbers it) is a relayed request that was refused or failed: it costs nothing. */
export const LogType = { all: 0, topup: 1, consume: 2, manage: 3, system: 4, error: 5 } as const;

export function isAdmin(role: number | undefined | null): boolean {
  return (role ?? 0) >= Role.admin;
}
export function isRoot(role: number | undefined | null): boolean {
  return (role ?? 0) >= Role.root;
}

/** An action of POST /api/user/manage. */
export type ManageAction = 'promote' | 'demote' | 'enable' | 'disable' | 'delete';

/**
 * The manage actions that can succeed for this caller on this user: the
 * server's rules (server/routes/api/userAdmin.ts). A caller manages only users
 * of a lower role; only root promotes, and only a common user; demote needs
 * an admin below root; the super admin is never disabled or deleted.
 */
export function allowedManageActions(callerRole: number | undefined | null, target: { role: number; status: number }): ManageAction[] {
  const caller = callerRole ?? 0;
  if (!isAdmin(caller) || caller <= target.role || isRoot(target.role)) return [];
  const actions: ManageAction[] = [];
  if (isRoot(caller) && target.role < Role.admin) actions.push('promote');
  if (target.role >= Role.admin) actions.push('demote');
  actions.push(target.status === UserStatus.enabled ? 'disable' : 'enable', 'delete');
  return actions;
}
