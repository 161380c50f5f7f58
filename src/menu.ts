// The top menu, in one-api's order: the resources' entries from their registry,
// with the pages that are not resources around them. App hands MENU_ITEMS to the
// layout, which filters them by role (layout/menuItems.ts).
import { Role } from '../common/roles';
import { visibleItems, type MenuItem } from './layout/menuItems';
import { RESOURCES } from './resources';

export type { MenuItem };

const HOME: MenuItem = { key: 'home', to: '/', label: 'app.menu.home' };
// one-api's menu puts top-up between the redemption codes and the users
const TOPUP: MenuItem = { key: 'topup', to: '/topup', label: 'app.menu.topup' };
const TOPUP_BEFORE = 'user';
const LAST: MenuItem[] = [
  // every signed-in user reads the models and prices of their group; visitors too when the operator publishes them
  { key: 'pricing', to: '/pricing', label: 'pricing.title', role: Role.user, publicPricing: true },
  // every signed-in user chats through their own keys
  { key: 'playground', to: '/playground', label: 'playground.title', role: Role.user },
  // every signed-in user sees the organisations they belong to; site admins all of them
  { key: 'organization', to: '/organization', label: 'organizations.menu', role: Role.user },
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

/** The items a role sees (no role: a visitor), Chat only with a chat link, the price list to visitors only when public. */
export function visibleMenuItems(role: number | undefined, hasChatLink: boolean, publicPricing = false): MenuItem[] {
  return visibleItems(MENU_ITEMS, role, hasChatLink, publicPricing);
}
