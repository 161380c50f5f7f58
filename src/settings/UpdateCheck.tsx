// Other tab: the running version and the check-for-update button. The server
// reads the latest release (RELEASE_CHECK_URL) and says clearly when it
// cannot; the release notes are Markdown, rendered sanitised.
import SystemUpdateAltIcon from '@mui/icons-material/SystemUpdateAlt';
import { Button, Chip, Dialog, DialogActions, DialogContent, DialogTitle, Link, Stack, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import { VERSION, type ReleaseInfo } from '../../common/version';
import { settingsProvider } from '../dataProvider/settings';
import { useNotice } from '../layout/notice';
import { SafeMarkdown } from '../layout/SafeContent';
import { errorMessage } from '../dataProvider/errorMessage';
import { formatTimestamp } from '../resources/shared/TimestampField';
import { SectionCard } from './OptionSection';

export function UpdateCheck() {
  const translate = useTranslate();
  const notice = useNotice();
  const [checking, setChecking] = useState(false);
  const [release, setRelease] = useState<ReleaseInfo | null>(null);

  const check = async () => {
    setChecking(true);
    try {
      setRelease(await settingsProvider.latestRelease());
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setChecking(false);
    }
  };

  const published = release?.published_at ? Date.parse(release.published_at) : NaN;
  return (
    <SectionCard title={translate('settings.section.other_update')}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: { sm: 'center' } }}>
        {/* a div: the chip is one, and a <p> may not hold it */}
        <Typography component="div">
          {translate('settings.update.current')} <Chip size="small" label={VERSION} sx={{ fontFamily: 'monospace' }} />
        </Typography>
        <Button
          variant="outlined"
          startIcon={<SystemUpdateAltIcon />}
          onClick={() => void check()}
          disabled={checking}
          sx={{ alignSelf: { xs: 'flex-start', sm: 'auto' } }}
        >
          {translate(checking ? 'settings.update.checking' : 'settings.update.check')}
        </Button>
      </Stack>
      <Dialog open={release !== null} onClose={() => setRelease(null)} fullWidth maxWidth="md" scroll="paper">
        {release && (
          <>
            <DialogTitle>
              {translate(release.update_available ? 'settings.update.available' : 'settings.update.latest', { tag: release.tag_name })}
            </DialogTitle>
            <DialogContent dividers>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
                {translate('settings.update.versions', { version: release.current_version, tag: release.tag_name })}
                {Number.isFinite(published) && ` · ${translate('settings.update.published', { date: formatTimestamp(published / 1000) })}`}
              </Typography>
              {release.name && release.name !== release.tag_name && (
                <Typography variant="h6" component="p" sx={{ mb: 1 }}>
                  {release.name}
                </Typography>
              )}
              {release.body.trim() ? (
                <SafeMarkdown markdown={release.body} />
              ) : (
                <Typography color="text.secondary">{translate('settings.update.no_notes')}</Typography>
              )}
            </DialogContent>
            <DialogActions>
              {release.html_url && (
                <Link href={release.html_url} target="_blank" rel="noopener noreferrer" sx={{ mr: 'auto', ml: 1 }}>
                  {translate('settings.update.open_release')}
                </Link>
              )}
              <Button onClick={() => setRelease(null)}>{translate('settings.close')}</Button>
            </DialogActions>
          </>
        )}
      </Dialog>
    </SectionCard>
  );
}
