// The light/dark switch in the header. react-admin's own button wraps itself in
// a MUI Tooltip, which brought Popper (12 KiB) to the login page; a native
// title gives the same hint.
import DarkModeIcon from '@mui/icons-material/Brightness4';
import LightModeIcon from '@mui/icons-material/Brightness7';
import { IconButton, useMediaQuery } from '@mui/material';
import { useTheme, useThemesContext, useTranslate } from 'react-admin';

export function ThemeSwitch() {
  const translate = useTranslate();
  const { darkTheme, defaultTheme } = useThemesContext();
  const prefersDark = useMediaQuery('(prefers-color-scheme: dark)', { noSsr: true });
  const [theme, setTheme] = useTheme(defaultTheme ?? (prefersDark && darkTheme ? 'dark' : 'light'));
  const label = translate('ra.action.toggle_theme', { _: 'Toggle Theme' });
  return (
    <IconButton color="inherit" aria-label={label} title={label} onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
      {theme === 'dark' ? <LightModeIcon /> : <DarkModeIcon />}
    </IconButton>
  );
}
