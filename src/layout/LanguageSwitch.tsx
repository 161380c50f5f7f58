// The language switch: a button naming the current language, and the menu of
// the console's languages.
import TranslateIcon from '@mui/icons-material/Translate';
import { Button, Menu, MenuItem } from '@mui/material';
import { useState } from 'react';
import { useLocaleState, useTranslate } from 'react-admin';
import { LOCALE_STORAGE_KEY, type Locale } from '../i18n';

const LANGUAGES: Array<{ locale: Locale; name: string }> = [
  { locale: 'en', name: 'English' },
  { locale: 'zh', name: '中文' },
];

/** The current language's name as a button, opening the menu of languages; a choice is kept in localStorage. */
export function LanguageSwitch({ color = 'inherit' }: { color?: 'inherit' | 'primary' }) {
  const [locale, setLocale] = useLocaleState();
  const translate = useTranslate();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const choose = (next: Locale) => {
    setLocale(next);
    localStorage.setItem(LOCALE_STORAGE_KEY, next);
    setAnchor(null);
  };
  const current = LANGUAGES.find((language) => language.locale === locale)?.name ?? 'English';
  return (
    <>
      <Button
        color={color}
        startIcon={<TranslateIcon fontSize="small" />}
        // the name starts with the text shown ("English, Language"), so a voice command saying what is seen finds it (WCAG 2.5.3)
        aria-label={`${current}, ${translate('app.menu.language')}`}
        onClick={(event) => setAnchor(event.currentTarget)}
        sx={{ textTransform: 'none', minWidth: 0 }}
      >
        {current}
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
