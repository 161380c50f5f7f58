// A top-menu item as the header shows it, and which of them a visitor sees. The items
// themselves (the registry's resources among the pages) are composed in src/menu.ts and
// handed down by App: the layout imports no resource module.

export interface MenuItem {
  key: string;
  to: string;
  label: string;
  role?: number;
  chat?: boolean;
}

/** An item with a `role` is shown only from that role up; Chat appears only when a chat link is stored. */
export function visibleItems(items: readonly MenuItem[], role: number | undefined, hasChatLink: boolean): MenuItem[] {
  return items.filter((item) => (role ?? 0) >= (item.role ?? 0) && (!item.chat || hasChatLink));
}
