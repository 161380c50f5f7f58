// The header: logo and system name, the top menu, and on the right the
// language switch and the login link or the user's dropdown. At 600 px and
// narrower the menu moves into a drawer opened by a toggle.
import AccountCircle from '@mui/icons-material/AccountCircle';
import LogoutIcon from '@mui/icons-material/Logout';
import MenuIcon from '@mui/icons-material/Menu';
import {
  AppBar,
  Box,
  Button,
  Divider,
  Drawer,
  IconButton,
  List,
  ListItemButton,
  ListItemText,
  Menu,
  MenuItem,
  Stack,
  Toolbar,
  Typography,
  useMediaQuery,
} from '@mui/material';
import { alpha, type Theme } from '@mui/material/styles';
import { useState } from 'react';
import { useLogout, useNotify, useTranslate } from 'react-admin';
import { Link as RouterLink, NavLink, useLocation } from 'react-router-dom';
import { readStoredUser } from '../authProvider/storage';
import { LanguageSwitch } from './LanguageSwitch';
import { ThemeSwitch } from './ThemeSwitch';
import { visibleMenuItems } from './menuItems';
import { logoOf, systemNameOf, useStatus } from './status';

function isActive(pathname: string, to: string): boolean {
  return to === '/' ? pathname === '/' : pathname === to || pathname.startsWith(`${to}/`);
}

/**
 * The current page's menu item: primary text on a primary tint. The grey
 * `action.selected` under primary.main text was 4.34:1; primary.dark on the
 * tint is 6.02:1 (light), primary.light on it 7.01:1 (dark).
 */
const activeItemSx = {
  textTransform: 'none',
  fontWeight: 700,
  px: 1.25,
  minWidth: 0,
  color: (theme: Theme) => (theme.palette.mode === 'dark' ? theme.palette.primary.light : theme.palette.primary.dark),
  bgcolor: (theme: Theme) => alpha(theme.palette.primary.main, theme.palette.mode === 'dark' ? 0.16 : 0.08),
} as const;

export function TopBar() {
  const translate = useTranslate();
  const logout = useLogout();
  const notify = useNotify();
  const { status } = useStatus();
  const { pathname } = useLocation();
  const narrow = useMediaQuery('(max-width:600px)');
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [userMenu, setUserMenu] = useState<HTMLElement | null>(null);
  const user = readStoredUser();
  const chatLink = status?.chat_link || localStorage.getItem('chat_link') || '';
  const items = visibleMenuItems(user?.role, Boolean(chatLink));
  const systemName = systemNameOf(status);

  const brand = (
    <Box
      component={RouterLink}
      to="/"
      sx={{ display: 'flex', alignItems: 'center', gap: 1, color: 'inherit', textDecoration: 'none', mr: 2 }}
    >
      <Box component="img" src={logoOf(status)} alt="" sx={{ width: 30, height: 30, borderRadius: 1 }} />
      <Typography variant="h6" component="span" sx={{ fontWeight: 700, letterSpacing: 0.2, whiteSpace: 'nowrap' }}>
        {systemName}
      </Typography>
    </Box>
  );

  const signOut = () => {
    setUserMenu(null);
    setDrawerOpen(false);
    // spec: the "logout succeeded" notice once signed out
    void logout().then(() => notify('app.auth.logout_success', { type: 'success' }));
  };

  return (
    <AppBar position="sticky" color="inherit" elevation={0} sx={{ borderBottom: 1, borderColor: 'divider', bgcolor: 'background.paper' }}>
      <Toolbar sx={{ gap: 0.5, minHeight: 60 }}>
        {narrow && (
          <IconButton edge="start" aria-label={translate('app.menu.open_menu')} onClick={() => setDrawerOpen(true)}>
            <MenuIcon />
          </IconButton>
        )}
        {brand}
        {!narrow && (
          <Box component="nav" aria-label="main" sx={{ display: 'flex', gap: 0.25, flexWrap: 'wrap', flexGrow: 1 }}>
            {items.map((item) => (
              <Button
                key={item.key}
                component={NavLink}
                to={item.to}
                color="inherit"
                aria-current={isActive(pathname, item.to) ? 'page' : undefined}
                sx={isActive(pathname, item.to) ? activeItemSx : { textTransform: 'none', fontWeight: 500, px: 1.25, minWidth: 0 }}
              >
                {translate(item.label)}
              </Button>
            ))}
          </Box>
        )}
        {narrow && <Box sx={{ flexGrow: 1 }} />}
        <Stack direction="row" spacing={0.5} sx={{ alignItems: 'center' }}>
          {!narrow && <LanguageSwitch />}
          <ThemeSwitch />
          {user ? (
            <>
              <Button
                color="inherit"
                startIcon={<AccountCircle />}
                onClick={(event) => setUserMenu(event.currentTarget)}
                sx={{ textTransform: 'none' }}
                aria-haspopup="menu"
              >
                {user.username}
              </Button>
              <Menu anchorEl={userMenu} open={Boolean(userMenu)} onClose={() => setUserMenu(null)}>
                <MenuItem onClick={signOut}>
                  <LogoutIcon fontSize="small" sx={{ mr: 1 }} />
                  {translate('app.auth.logout')}
                </MenuItem>
              </Menu>
            </>
          ) : (
            !narrow && (
              <Button component={RouterLink} to="/login" variant="contained" disableElevation sx={{ textTransform: 'none' }}>
                {translate('app.auth.login')}
              </Button>
            )
          )}
        </Stack>
      </Toolbar>
      <Drawer open={drawerOpen} onClose={() => setDrawerOpen(false)}>
        <Box sx={{ width: 260, display: 'flex', flexDirection: 'column', height: '100%' }} role="presentation">
          <Box sx={{ p: 2 }}>{brand}</Box>
          <Divider />
          <List component="nav" aria-label="main">
            {items.map((item) => (
              <ListItemButton
                key={item.key}
                component={NavLink}
                to={item.to}
                selected={isActive(pathname, item.to)}
                onClick={() => setDrawerOpen(false)}
              >
                <ListItemText primary={translate(item.label)} />
              </ListItemButton>
            ))}
          </List>
          <Divider />
          <Stack spacing={1} sx={{ p: 2 }}>
            {user ? (
              <Button variant="outlined" startIcon={<LogoutIcon />} onClick={signOut}>
                {translate('app.auth.logout')}
              </Button>
            ) : (
              <>
                <Button component={RouterLink} to="/login" variant="contained" disableElevation onClick={() => setDrawerOpen(false)}>
                  {translate('app.auth.login')}
                </Button>
                <Button component={RouterLink} to="/register" variant="outlined" onClick={() => setDrawerOpen(false)}>
                  {translate('app.auth.register')}
                </Button>
              </>
            )}
            <LanguageSwitch color="primary" />
          </Stack>
        </Box>
      </Drawer>
    </AppBar>
  );
}
