// The console's top menu, in order. `admin` items are shown only to role >= 10;
// Chat appears only when a chat link is stored.
export interface MenuItem {
  key: string;
  to: string;
  label: string;
  admin?: boolean;
  chat?: boolean;
}

export const MENU_ITEMS: MenuItem[] = [
  { key: 'home', to: '/', label: 'app.menu.home' },
  { key: 'channel', to: '/channel', label: 'app.menu.channel', admin: true },
  { key: 'token', to: '/token', label: 'app.menu.token' },
  { key: 'redemption', to: '/redemption', label: 'app.menu.redemption', admin: true },
  { key: 'topup', to: '/topup', label: 'app.menu.topup' },
  { key: 'user', to: '/user', label: 'app.menu.user', admin: true },
  { key: 'log', to: '/log', label: 'app.menu.log' },
  { key: 'webhook', to: '/webhook', label: 'webhooks.menu', admin: true },
  { key: 'setting', to: '/setting', label: 'app.menu.setting' },
  { key: 'about', to: '/about', label: 'app.menu.about' },
  { key: 'chat', to: '/chat', label: 'app.menu.chat', chat: true },
];

export function visibleMenuItems(role: number | undefined, hasChatLink: boolean): MenuItem[] {
  return MENU_ITEMS.filter((item) => (!item.admin || (role ?? 0) >= 10) && (!item.chat || hasChatLink));
}
