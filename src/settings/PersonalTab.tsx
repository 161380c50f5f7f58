// The Personal tab: profile link, access token, two-factor sign-in, passkeys, bindings,
// invite link, language, and account deletion confirmed by typing one's own
// username. The sections with state of their own are in PersonalSections.tsx.
import { Button, Stack } from '@mui/material';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { LanguageSwitch } from '../layout/LanguageSwitch';
import { AccessTokenSection, BindingsSection, DeleteAccountSection, InviteSection, Section } from './PersonalSections';
import { PasskeyPanel } from './PasskeyPanel';
import { TwoFactorPanel } from './TwoFactorPanel';

/** The signed-in user's own settings, one section after another. */
export function PersonalTab() {
  const translate = useTranslate();
  return (
    <Stack spacing={3}>
      <Section title="app.setting.profile">
        <Button component={RouterLink} to="/user/edit" variant="contained" disableElevation>
          {translate('app.setting.edit_profile')}
        </Button>
      </Section>
      <AccessTokenSection />
      <Section title="app.two_factor.title" help="app.two_factor.help">
        <TwoFactorPanel />
      </Section>
      <Section title="passkey.title" help="passkey.help">
        <PasskeyPanel />
      </Section>
      <BindingsSection />
      <InviteSection />
      <Section title="app.menu.language" help="app.setting.language_help">
        <LanguageSwitch color="primary" />
      </Section>
      <DeleteAccountSection />
    </Stack>
  );
}
