// A top-menu item as the header shows it, and which of them a visitor sees. The items
// themselves (the registry's resources among the pages) are composed in src/menu.ts and
// handed down by App: the layout imports no resource module.

export interface MenuItem {
  key: string;
  to: string;
  label: string;
  role?: number;
  chat?: boolean;
  /** Shown to visitors too while the operator publishes the price list (the status' `public_pricing`). */
  publicPricing?: boolean;
}

/**
 * An item with a `role` is shown only from that role up (or to anyone, when it is the price list and prices are
 * public); Chat appears only when a chat link is stored.
 */
export function visibleItems(
  items: readonly MenuItem[],
  role: number | undefined,
  hasChatLink: boolean,
  publicPricing = false,
): MenuItem[] {
  return items.filter(
    (item) => ((role ?? 0) >= (item.role ?? 0) || (item.publicPricing === true && publicPricing)) && (!item.chat || hasChatLink),
  );
}
