// /setting: Personal for everyone; Operation, System and Other for admins.
// The admin tabs list the current option values; editing them is the settings
// issue's work and the server refuses writes from anyone but root.
import { Card, CardContent, Stack, Tab, Table, TableBody, TableCell, TableHead, TableRow, Tabs, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import { OPTION_SPECS, type OptionKey } from '../../common/options';
import { isAdmin, isRoot } from '../../common/roles';
import { readStoredUser } from '../authProvider/storage';
import { dataProvider, type OptionRow } from '../dataProvider';
import { PersonalTab } from './PersonalTab';
import { SETTING_SECTIONS, type SettingSection } from './sections';

function OptionsTab({ section, options }: { section: SettingSection; options: OptionRow[] | null }) {
  const translate = useTranslate();
  const keys = SETTING_SECTIONS[section];
  if (options === null) return <Typography color="text.secondary">{translate('app.setting.options_root_only')}</Typography>;
  const byKey = new Map(options.map((row) => [row.key, row]));
  return (
    <Stack spacing={2}>
      <Typography variant="body2" color="text.secondary">{translate('app.setting.options_readonly')}</Typography>
      <Table size="small">
        <TableHead>
          <TableRow>
            <TableCell>{translate('app.setting.option_key')}</TableCell>
            <TableCell>{translate('app.setting.option_value')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {keys.map((key: OptionKey) => {
            const row = byKey.get(key);
            const secret = OPTION_SPECS[key].kind === 'secret';
            return (
              <TableRow key={key}>
                <TableCell sx={{ fontFamily: 'monospace', whiteSpace: 'nowrap' }}>{key}</TableCell>
                <TableCell sx={{ wordBreak: 'break-all', maxWidth: 520 }}>
                  {secret ? translate(row?.set ? 'app.setting.secret_set' : 'app.setting.secret_unset') : row?.value}
                </TableCell>
              </TableRow>
            );
          })}
        </TableBody>
      </Table>
    </Stack>
  );
}

function Settings() {
  const translate = useTranslate();
  const user = readStoredUser();
  const admin = isAdmin(user?.role);
  const [tab, setTab] = useState<'personal' | SettingSection>('personal');
  const [options, setOptions] = useState<OptionRow[] | null>(null);
  useEffect(() => {
    if (isRoot(user?.role)) dataProvider.getOptions().then(setOptions).catch(() => setOptions(null));
  }, [user?.role]);
  const tabs: Array<'personal' | SettingSection> = admin ? ['personal', 'operation', 'system', 'other'] : ['personal'];
  return (
    <Card variant="outlined" sx={{ borderRadius: 3 }}>
      <CardContent sx={{ p: { xs: 2, sm: 3 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 1 }}>{translate('app.setting.title')}</Typography>
        <Tabs value={tab} onChange={(_, next) => setTab(next)} variant="scrollable" allowScrollButtonsMobile sx={{ mb: 3, borderBottom: 1, borderColor: 'divider' }}>
          {tabs.map((name) => (
            <Tab key={name} value={name} label={translate(`app.setting.${name}`)} />
          ))}
        </Tabs>
        {tab === 'personal' ? <PersonalTab /> : <OptionsTab section={tab} options={options} />}
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
