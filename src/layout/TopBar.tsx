// The header: logo and system name, the top menu (the items App hands down), and
// on the right the language switch and the login link or the user's dropdown. At
// 600 px and narrower the menu moves into a drawer opened by a toggle
// (MenuDrawer below).
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
import { useState, type ReactNode } from 'react';
import { useLogout, useNotify, useTranslate } from 'react-admin';
import { Link as RouterLink, NavLink, useLocation } from 'react-router-dom';
import { readStoredUser } from '../dataProvider/storage';
import type { SessionUser } from '../../common/records';
import { LanguageSwitch } from './LanguageSwitch';
import { ThemeSwitch } from './ThemeSwitch';
import { visibleItems, type MenuItem as MenuEntry } from './menuItems';
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
  px: 0.75,
  minWidth: 0,
  color: (theme: Theme) => (theme.palette.mode === 'dark' ? theme.palette.primary.light : theme.palette.primary.dark),
  bgcolor: (theme: Theme) => alpha(theme.palette.primary.main, theme.palette.mode === 'dark' ? 0.16 : 0.08),
} as const;

/** The logo and the system name, linking home. */
function Brand() {
  const { status } = useStatus();
  return (
    <Box
      component={RouterLink}
      to="/"
      sx={{ display: 'flex', alignItems: 'center', gap: 1, color: 'inherit', textDecoration: 'none', mr: 2 }}
    >
      <Box component="img" src={logoOf(status)} alt="" sx={{ width: 30, height: 30, borderRadius: 1 }} />
      <Typography variant="h6" component="span" sx={{ fontWeight: 700, letterSpacing: 0.2, whiteSpace: 'nowrap' }}>
        {systemNameOf(status)}
      </Typography>
    </Box>
  );
}

/** The wide screen's menu: one button per item, the current page's tinted. */
function MainMenu({ items }: { items: MenuEntry[] }) {
  const translate = useTranslate();
  const { pathname } = useLocation();
  return (
    <Box component="nav" aria-label="main" sx={{ display: 'flex', gap: 0.25, flexWrap: 'wrap', flexGrow: 1 }}>
      {items.map((item) => (
        <Button
          key={item.key}
          component={NavLink}
          to={item.to}
          color="inherit"
          aria-current={isActive(pathname, item.to) ? 'page' : undefined}
          sx={isActive(pathname, item.to) ? activeItemSx : { textTransform: 'none', fontWeight: 500, px: 0.75, minWidth: 0 }}
        >
          {translate(item.label)}
        </Button>
      ))}
    </Box>
  );
}

/** The signed-in user's name, opening a menu with Sign out. */
function UserMenu({ user, signOut }: { user: SessionUser; signOut: (closeMenu: () => void) => void }) {
  const translate = useTranslate();
  const [userMenu, setUserMenu] = useState<HTMLElement | null>(null);
  return (
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
        <MenuItem onClick={() => signOut(() => setUserMenu(null))}>
          <LogoutIcon fontSize="small" sx={{ mr: 1 }} />
          {translate('app.auth.logout')}
        </MenuItem>
      </Menu>
    </>
  );
}

interface MenuDrawerProps {
  open: boolean;
  close: () => void;
  brand: ReactNode;
  items: MenuEntry[];
  user: SessionUser | null;
  signOut: () => void;
}

/** The narrow screen's menu: the items, then sign in/out and the language switch. */
function MenuDrawer({ open, close, brand, items, user, signOut }: MenuDrawerProps) {
  const translate = useTranslate();
  const { pathname } = useLocation();
  return (
    <Drawer open={open} onClose={close}>
      <Box sx={{ width: 260, display: 'flex', flexDirection: 'column', height: '100%' }} role="presentation">
        <Box sx={{ p: 2 }}>{brand}</Box>
        <Divider />
        <List component="nav" aria-label="main">
          {items.map((item) => (
            <ListItemButton key={item.key} component={NavLink} to={item.to} selected={isActive(pathname, item.to)} onClick={close}>
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
              <Button component={RouterLink} to="/login" variant="contained" disableElevation onClick={close}>
                {translate('app.auth.login')}
              </Button>
              <Button component={RouterLink} to="/register" variant="outlined" onClick={close}>
                {translate('app.auth.register')}
              </Button>
            </>
          )}
          <LanguageSwitch color="primary" />
        </Stack>
      </Box>
    </Drawer>
  );
}

/** The header; `menu` is every item (App's), shown as the user's role allows. */
export function TopBar({ menu }: { menu: readonly MenuEntry[] }) {
  const translate = useTranslate();
  const logout = useLogout();
  const notify = useNotify();
  const { status } = useStatus();
  const narrow = useMediaQuery('(max-width:600px)');
  const [drawerOpen, setDrawerOpen] = useState(false);
  const user = readStoredUser();
  const chatLink = status?.chat_link || localStorage.getItem('chat_link') || '';
  const items = visibleItems(menu, user?.role, Boolean(chatLink), status?.public_pricing === true);
  const brand = <Brand />;

  const signOut = (closeMenu?: () => void) => {
    closeMenu?.();
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
        {!narrow && <MainMenu items={items} />}
        {narrow && <Box sx={{ flexGrow: 1 }} />}
        <Stack direction="row" spacing={0.5} sx={{ alignItems: 'center' }}>
          {!narrow && <LanguageSwitch />}
          <ThemeSwitch />
          {user ? (
            <UserMenu user={user} signOut={signOut} />
          ) : (
            !narrow && (
              <Button component={RouterLink} to="/login" variant="contained" disableElevation sx={{ textTransform: 'none' }}>
                {translate('app.auth.login')}
              </Button>
            )
          )}
        </Stack>
      </Toolbar>
      <MenuDrawer open={drawerOpen} close={() => setDrawerOpen(false)} brand={brand} items={items} user={user} signOut={() => signOut()} />
    </AppBar>
  );
}
