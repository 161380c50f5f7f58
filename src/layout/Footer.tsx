// Footer: the admin's footer HTML (sanitised) or a default line, and the
// version, re-read from the cached status up to 5 times at 200 ms while the
// status is still loading.
import { Box, Container, Link, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import type { ClientStatus } from '../../common/options';
import { SafeHtml } from './LazySafeContent';
import { systemNameOf, useStatus } from './status';

const VERSION_POLLS = 5;
const VERSION_POLL_MS = 200;

function cachedVersion(): string {
  try {
    return (JSON.parse(localStorage.getItem('status') ?? 'null') as ClientStatus | null)?.version ?? '';
  } catch {
    return '';
  }
}

export function Footer() {
  const translate = useTranslate();
  const { status } = useStatus();
  const [version, setVersion] = useState(() => status?.version ?? cachedVersion());

  useEffect(() => {
    if (status?.version) {
      setVersion(status.version);
      return;
    }
    let polls = 0;
    const timer = setInterval(() => {
      polls += 1;
      const found = cachedVersion();
      if (found) setVersion(found);
      if (found || polls >= VERSION_POLLS) clearInterval(timer);
    }, VERSION_POLL_MS);
    return () => clearInterval(timer);
  }, [status?.version]);

  const footerHtml = status?.footer_html ?? localStorage.getItem('footer_html') ?? '';
  return (
    <Box component="footer" sx={{ borderTop: 1, borderColor: 'divider', py: 2.5, mt: 'auto', bgcolor: 'background.paper' }}>
      <Container maxWidth="lg" sx={{ textAlign: 'center' }}>
        {footerHtml ? (
          <SafeHtml html={footerHtml} sx={{ color: 'text.secondary', fontSize: 14, '& a': { color: 'primary.main' } }} />
        ) : (
          <Typography variant="body2" color="text.secondary">
            {systemNameOf(status)} {version && `· ${translate('app.common.version', { version })}`} ·{' '}
            <Link href="/about" underline="hover" color="inherit">
              {translate('app.common.powered_by')}
            </Link>
          </Typography>
        )}
        {footerHtml && version && (
          <Typography variant="caption" color="text.secondary">
            {translate('app.common.version', { version })}
          </Typography>
        )}
      </Container>
    </Box>
  );
}
