// The named badge colours the spec uses (channel types, response times), as
// one-api's console drew them. Yellow and olive are light: they take dark text.
export const PALETTE = {
  red: '#db2828',
  orange: '#f2711c',
  yellow: '#fbbd08',
  olive: '#b5cc18',
  green: '#21ba45',
  teal: '#00b5ad',
  blue: '#2185d0',
  violet: '#6435c9',
  purple: '#a333c8',
  pink: '#e03997',
  brown: '#a5673f',
  grey: '#767676',
  black: '#1b1c1d',
} as const;

export type PaletteName = keyof typeof PALETTE;

const DARK_TEXT: ReadonlySet<string> = new Set(['yellow', 'olive']);

/** `sx` for a filled MUI Chip in one of the named colours. */
export function badgeSx(name: string) {
  const background = PALETTE[name as PaletteName] ?? PALETTE.grey;
  return { bgcolor: background, color: DARK_TEXT.has(name) ? 'rgba(0, 0, 0, 0.87)' : '#fff', fontWeight: 500 };
}
