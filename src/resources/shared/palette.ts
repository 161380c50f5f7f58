// The named badge colours the spec uses (channel types, response times), as
// one-api's console drew them, except where white text on them fell short of
// AA (4.5:1): those are the same hue, darker. Yellow and olive are light:
// they take dark text (9.4:1 and 8.8:1).
export const PALETTE = {
  red: '#db2828',
  orange: '#c2410c', // was #f2711c, 2.94:1 under white; now 5.18:1
  yellow: '#fbbd08',
  olive: '#b5cc18',
  green: '#15803d', // was #21ba45, 2.57:1; now 5.02:1
  teal: '#0f766e', // was #00b5ad, 2.56:1; now 5.47:1
  blue: '#1d6fb8', // was #2185d0, 3.94:1; now 5.23:1
  violet: '#6435c9',
  purple: '#a333c8',
  pink: '#be185d', // was #e03997, 4.04:1; now 6.04:1
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
