// The console's light and dark themes. Every colour that carries text meets
// WCAG AA (4.5:1) on the surfaces it is drawn on; the ratios are in the
// comments so a later change can be checked against them.
// `contrastThreshold: 4.5` makes MUI pick the text colour of filled buttons
// and chips at AA too (its default, 3, lets white on orange through at 3.1:1).
import { FormControl, type FormControlProps } from '@mui/material';
import { forwardRef } from 'react';
import { defaultDarkTheme, defaultLightTheme, type RaThemeOptions } from 'react-admin';

/**
 * The root of every MUI TextField. react-admin 5.15's inputs (TextInput,
 * SearchInput, SelectInput, the Autocomplete inputs) still pass the MUI 5
 * props `InputProps`/`inputProps` beside the `slotProps` they also pass; MUI 9
 * no longer reads them, so they reached the DOM (React warned on every form).
 * They carry nothing `slotProps` does not, so the root drops them.
 */
const TextFieldRoot = forwardRef<HTMLDivElement, FormControlProps & Record<string, unknown>>(function TextFieldRoot(props, ref) {
  const { InputProps, inputProps, InputLabelProps, FormHelperTextProps, SelectProps, inputRef, ownerState, ...rest } = props;
  return <FormControl ref={ref} {...rest} />;
});

const textField = { MuiTextField: { defaultProps: { slots: { root: TextFieldRoot } } } };

/**
 * react-admin 5.15 names its row-selection checkboxes with an `aria-label`
 * prop, which MUI 9 puts on the checkbox's root <span> (a label a span may not
 * carry) while the <input> itself stays unnamed: both axe failures on every
 * list with bulk actions. The label moves to the input.
 */
type CheckboxOwner = { 'aria-label'?: string };
const checkbox = {
  MuiCheckbox: {
    defaultProps: {
      slotProps: {
        root: (ownerState: CheckboxOwner) => (ownerState['aria-label'] ? { 'aria-label': undefined } : {}),
        input: (ownerState: CheckboxOwner) => (ownerState['aria-label'] ? { 'aria-label': ownerState['aria-label'] } : {}),
      },
    },
  },
};

const shared: Omit<RaThemeOptions, 'palette' | 'components'> = {
  shape: { borderRadius: 8 },
  typography: {
    fontFamily: '"Inter", "Segoe UI", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", Roboto, Helvetica, Arial, sans-serif',
  },
};

export const lightTheme: RaThemeOptions = {
  ...defaultLightTheme,
  ...shared,
  palette: {
    mode: 'light',
    contrastThreshold: 4.5,
    // on white: main 5.17:1, dark 6.70:1 (the active menu item's text, 6.02:1 on its tint)
    primary: { main: '#2563eb', dark: '#1d4ed8', light: '#60a5fa' },
    secondary: { main: '#7c3aed' }, // 5.70:1
    // MUI's #ed6c02 gave 3.11:1 for the orange action text; amber 700 gives 5.02:1
    warning: { main: '#b45309' },
    info: { main: '#0369a1' }, // MUI's #0288d1 was 3.86:1 under white chip text; now 5.93:1
    success: { main: '#2e7d32' }, // 5.13:1
    // on white 6.47:1, on the form toolbar's grey (react-admin's #e0e0e0, where Delete sits) 4.90:1; MUI's #d32f2f gave 3.77:1 there
    error: { main: '#b91c1c' },
    background: { default: '#f5f7fb', paper: '#ffffff' },
  },
  components: {
    ...defaultLightTheme.components,
    ...textField,
    ...checkbox,
    MuiButton: { styleOverrides: { root: { borderRadius: 8 } } },
    MuiCard: { styleOverrides: { root: { borderColor: '#e5e7eb' } } },
  },
};

export const darkTheme: RaThemeOptions = {
  // react-admin's dark defaults: the form toolbar is dark grey, not the light theme's
  ...defaultDarkTheme,
  ...shared,
  palette: {
    mode: 'dark',
    contrastThreshold: 4.5,
    // on the dark paper (#1e1e1e): 6.56:1; filled buttons take dark text.
    // `dark` is also text on white (the home page's white button): #3b82f6 gave
    // 3.67:1 there, #1d4ed8 gives 6.70:1; filled buttons hover to `light` instead (below)
    primary: { main: '#60a5fa', dark: '#1d4ed8', light: '#93c5fd' },
    secondary: { main: '#a78bfa' }, // 6.13:1
    warning: { main: '#fbbf24' }, // 9.99:1
    info: { main: '#38bdf8' }, // 7.78:1
    success: { main: '#4ade80' }, // 9.57:1
    // on the paper 8.78:1, on the form toolbar's grey (react-admin's #424242, where Delete sits) 5.30:1; #f87171 gave 3.63:1 there
    error: { main: '#fca5a5' },
    background: { default: '#121212', paper: '#1e1e1e' },
  },
  components: {
    ...defaultDarkTheme.components,
    ...textField,
    ...checkbox,
    MuiButton: {
      styleOverrides: {
        root: {
          borderRadius: 8,
          // MUI hovers a filled button to primary.dark under the same dark text: 2.9:1 here
          variants: [{ props: { variant: 'contained', color: 'primary' }, style: { '&:hover': { backgroundColor: '#93c5fd' } } }],
        },
      },
    },
    // the light theme's paper-on-grey contrast comes from the background; here a card needs its own edge
    MuiCard: { styleOverrides: { root: { borderColor: 'rgba(255, 255, 255, 0.12)' } } },
    // MUI lightens dark-mode paper by elevation with a white overlay; keep surfaces the one colour the ratios above were measured on
    MuiPaper: { styleOverrides: { root: { backgroundImage: 'none' } } },
  },
};

/** The light theme, under its old name. */
export const theme = lightTheme;
