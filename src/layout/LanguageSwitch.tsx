import TranslateIcon from '@mui/icons-material/Translate';
import { Button, Menu, MenuItem } from '@mui/material';
import { useState } from 'react';
import { useLocaleState, useTranslate } from 'react-admin';
import { LOCALE_STORAGE_KEY, type Locale } from '../i18n';

const LANGUAGES: Array<{ locale: Locale; name: string }> = [
  { locale: 'en', name: 'English' },
  { locale: 'zh', name: '中文' },
];

export function LanguageSwitch({ color = 'inherit' }: { color?: 'inherit' | 'primary' }) {
  const [locale, setLocale] = useLocaleState();
  const translate = useTranslate();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const choose = (next: Locale) => {
    setLocale(next);
    localStorage.setItem(LOCALE_STORAGE_KEY, next);
    setAnchor(null);
  };
  return (
    <>
      <Button
        color={color}
        startIcon={<TranslateIcon fontSize="small" />}
        aria-label={translate('app.menu.language')}
        onClick={(event) => setAnchor(event.currentTarget)}
        sx={{ textTransform: 'none', minWidth: 0 }}
      >
        {LANGUAGES.find((language) => language.locale === locale)?.name ?? 'English'}
      </Button>
      <Menu anchorEl={anchor} open={Boolean(anchor)} onClose={() => setAnchor(null)}>
        {LANGUAGES.map((language) => (
          <MenuItem key={language.locale} selected={language.locale === locale} onClick={() => choose(language.locale)}>
            {language.name}
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}
