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
/** logs.type */
export const LogType = { all: 0, topup: 1, consume: 2, manage: 3, system: 4 } as const;

export function isAdmin(role: number | undefined | null): boolean {
  return (role ?? 0) >= Role.admin;
}
export function isRoot(role: number | undefined | null): boolean {
  return (role ?? 0) >= Role.root;
}
