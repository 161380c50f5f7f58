// /setting: Personal for everyone; Operation, Prices, System and Other for admins
// (the admin settings screen). Admins change Operation, Prices and Other; the System
// tab and the top-up link are root's (see common/options.ts, rootOnly).
import { Card, CardContent, Tab, Tabs, Typography } from '@mui/material';
import { useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import { isAdmin } from '../../common/roles';
import { readStoredUser } from '../dataProvider/storage';
import { UnsavedChangesGuard } from '../layout/UnsavedChangesGuard';
import { OptionsTab } from './OptionsTab';
import { PersonalTab } from './PersonalTab';
import type { SettingTab } from './sections';
import { useOptionForm } from './useOptionForm';

function Settings() {
  const translate = useTranslate();
  const admin = isAdmin(readStoredUser()?.role);
  // one form for the admin tabs, so unsaved fields survive switching tabs
  const form = useOptionForm(admin);
  const [tab, setTab] = useState<'personal' | SettingTab>('personal');
  const tabs: Array<'personal' | SettingTab> = admin ? ['personal', 'operation', 'prices', 'system', 'other'] : ['personal'];
  return (
    <Card variant="outlined" sx={{ borderRadius: 3 }}>
      <UnsavedChangesGuard dirty={form.hasUnsavedChanges} />
      <CardContent sx={{ p: { xs: 2, sm: 3 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 1 }}>
          {translate('app.setting.title')}
        </Typography>
        <Tabs
          value={tab}
          onChange={(_, next: 'personal' | SettingTab) => setTab(next)}
          variant="scrollable"
          allowScrollButtonsMobile
          sx={{ mb: 3, borderBottom: 1, borderColor: 'divider' }}
        >
          {tabs.map((name) => (
            <Tab key={name} value={name} label={translate(name === 'prices' ? 'settings.prices.tab' : `app.setting.${name}`)} />
          ))}
        </Tabs>
        {tab === 'personal' ? <PersonalTab /> : <OptionsTab tab={tab} form={form} />}
      </CardContent>
    </Card>
  );
}

export default function SettingPage() {
  return (
    <Authenticated>
      <Settings />
    </Authenticated>
  );
}
