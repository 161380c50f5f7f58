// An admin settings tab (Operation, Prices, System or Other): its sections
// from sections.ts, plus the pieces a few sections add — the price table on
// Prices, the GitHub and single sign-on callback addresses, the SMTP test e-mail and, on Other,
// the update check and (for root) the import from one-api or new-api. The
// retention section of Operation is a panel of its own (RetentionSection.tsx).
import SendIcon from '@mui/icons-material/Send';
import { Alert, Button, CircularProgress, Stack, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import { isRoot } from '../../common/roles';
import { readStoredUser } from '../dataProvider/storage';
import { settingsProvider } from '../dataProvider/settings';
import { LoadError } from '../layout/LoadError';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { OptionSection } from './OptionSection';
import { PriceTable } from './PriceTable';
import { RetentionSection } from './RetentionSection';
import { SETTING_TABS, type SettingSection, type SettingTab } from './sections';
import { ImportSection } from './ImportSection';
import { UpdateCheck } from './UpdateCheck';
import type { OptionForm } from './useOptionForm';

function TestEmailButton({ form, section }: { form: OptionForm; section: SettingSection }) {
  const translate = useTranslate();
  const notice = useNotice();
  const [sending, setSending] = useState(false);
  const unsaved = form.isDirty(section.keys);
  const send = async () => {
    setSending(true);
    try {
      const email = await settingsProvider.sendTestEmail();
      notice('settings.smtp.test_sent', 'success', { email });
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setSending(false);
    }
  };
  return (
    <Button
      variant="outlined"
      startIcon={sending ? <CircularProgress size={16} /> : <SendIcon />}
      disabled={sending || unsaved || !isRoot(readStoredUser()?.role)}
      title={translate(unsaved ? 'settings.smtp.save_first' : 'settings.smtp.test_help')}
      onClick={() => void send()}
    >
      {translate('settings.smtp.test')}
    </Button>
  );
}

/** The address a provider sends the browser back to (GitHub's callback, the OpenID provider's redirect URI). */
function CallbackAddress({ form, provider }: { form: OptionForm; provider: 'github' | 'oidc' }) {
  const translate = useTranslate();
  const base = (form.stored('ServerAddress') || window.location.origin).replace(/\/+$/, '');
  return (
    <Typography variant="body2" color="text.secondary" sx={{ mt: 2, wordBreak: 'break-all' }}>
      {translate(`settings.${provider}.callback`, { url: `${base}/oauth/${provider}` })}
    </Typography>
  );
}

/** What a section shows under its fields: the callback address of the providers that need one registered. */
function sectionExtra(tab: SettingTab, section: SettingSection, form: OptionForm) {
  if (tab !== 'system' || (section.id !== 'github' && section.id !== 'oidc')) return undefined;
  return <CallbackAddress form={form} provider={section.id} />;
}

export function OptionsTab({ tab, form }: { tab: SettingTab; form: OptionForm }) {
  const translate = useTranslate();
  if (form.loadError) return <LoadError onRetry={form.reload} detail={form.loadError} />;
  if (!form.loaded) return <CircularProgress aria-label={translate('ra.page.loading')} />;
  const lockedForCaller = SETTING_TABS[tab].every((section) => section.keys.every((key) => !form.canWrite(key)));
  return (
    <Stack spacing={2.5}>
      {lockedForCaller && <Alert severity="info">{translate('settings.root_only')}</Alert>}
      {tab === 'other' && <UpdateCheck />}
      {tab === 'other' && isRoot(readStoredUser()?.role) && <ImportSection />}
      {SETTING_TABS[tab].map((section) =>
        tab === 'operation' && section.id === 'retention' ? (
          <RetentionSection key={section.id} section={section} form={form} />
        ) : (
          <OptionSection
            key={section.id}
            tab={tab}
            section={section}
            form={form}
            extra={sectionExtra(tab, section, form)}
            actions={tab === 'system' && section.id === 'smtp' ? <TestEmailButton form={form} section={section} /> : undefined}
            lead={tab === 'prices' && section.id === 'ratio' ? <PriceTable form={form} /> : undefined}
          />
        ),
      )}
    </Stack>
  );
}
