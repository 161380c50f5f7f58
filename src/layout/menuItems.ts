// The top menu, in one-api's order: the resources' entries from their registry,
// with the pages that are not resources around them. An item with a `role` is
// shown only from that role up; Chat appears only when a chat link is stored.
import { Role } from '../../common/roles';
import { RESOURCES } from '../resources';

export interface MenuItem {
  key: string;
  to: string;
  label: string;
  role?: number;
  chat?: boolean;
}

const HOME: MenuItem = { key: 'home', to: '/', label: 'app.menu.home' };
// one-api's menu puts top-up between the redemption codes and the users
const TOPUP: MenuItem = { key: 'topup', to: '/topup', label: 'app.menu.topup' };
const TOPUP_BEFORE = 'user';
const LAST: MenuItem[] = [
  // every signed-in user chats through their own keys
  { key: 'playground', to: '/playground', label: 'playground.title', role: Role.user },
  { key: 'setting', to: '/setting', label: 'app.menu.setting' },
  { key: 'about', to: '/about', label: 'app.menu.about' },
  { key: 'chat', to: '/chat', label: 'app.menu.chat', chat: true },
];

export const MENU_ITEMS: MenuItem[] = [
  HOME,
  ...RESOURCES.flatMap(({ name, menu }) => {
    const items: MenuItem[] = name === TOPUP_BEFORE ? [TOPUP] : [];
    return menu ? [...items, { key: name, to: `/${name}`, ...menu }] : items;
  }),
  ...LAST,
];

export function visibleMenuItems(role: number | undefined, hasChatLink: boolean): MenuItem[] {
  return MENU_ITEMS.filter((item) => (role ?? 0) >= (item.role ?? 0) && (!item.chat || hasChatLink));
}
