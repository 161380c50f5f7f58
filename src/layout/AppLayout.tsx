// The page frame: header with the top menu (its items handed down by App), the page, the footer. Also tells
// once when the status could not be loaded or a newer server version runs.
import { Box, Container } from '@mui/material';
import { Suspense, useEffect, useRef, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import { mustEnrolElsewhere, TWO_FACTOR_SETUP_PATH } from '../authProvider';
import { VERSION } from '../../common/version';
import { DocumentMeta } from './DocumentMeta';
import { Footer } from './Footer';
import { LoadingPage } from './LoadingPage';
import { useNotice } from './notice';
import { useStatus } from './status';
import type { MenuItem } from './menuItems';
import { TopBar } from './TopBar';

function StatusNotices() {
  const { status, failed } = useStatus();
  const notice = useNotice();
  const toldVersion = useRef(false);
  useEffect(() => {
    if (failed) notice('app.errors.cannot_connect', 'error');
  }, [failed, notice]);
  useEffect(() => {
    if (!status || toldVersion.current) return;
    if (status.version && status.version !== VERSION && status.version !== 'v0.0.0') {
      toldVersion.current = true;
      notice('app.common.new_version', 'notice', { version: status.version });
    }
  }, [status, notice]);
  return null;
}

/** The list pages: tables use the whole width (row actions must not need a sideways scroll). */
const LIST_PAGE = /^\/(channel|token|redemption|user|log|webhook|webhook_delivery)\/?$/;

/** The frame around every page; `menu` is the top menu's items, handed down by App (src/menu.ts). */
export function AppLayout({ children, menu }: { children?: ReactNode; menu: readonly MenuItem[] }) {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const mustEnrol = mustEnrolElsewhere(pathname);
  useEffect(() => {
    if (mustEnrol) void navigate(TWO_FACTOR_SETUP_PATH, { replace: true });
  }, [mustEnrol, navigate]);
  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', minHeight: '100vh', bgcolor: 'background.default' }}>
      <DocumentMeta />
      <TopBar menu={menu} />
      <StatusNotices />
      <Container component="main" maxWidth={LIST_PAGE.test(pathname) ? false : 'lg'} sx={{ flexGrow: 1, py: { xs: 2, sm: 3 } }}>
        <Suspense fallback={<LoadingPage />}>{mustEnrol ? null : children}</Suspense>
      </Container>
      <Footer />
    </Box>
  );
}
