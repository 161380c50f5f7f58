// The playground's settings column (PlaygroundPage.tsx): which key and model,
// the system prompt, temperature and max tokens, then what the page adds.
import { Box, MenuItem, Slider, Stack, TextField, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import type { TokenRecord } from '../../common/records';

/** The settings column: key, model, system prompt, temperature, max tokens. */
export interface Settings {
  tokenId: string;
  model: string;
  system: string;
  temperature: number;
  maxTokens: string;
}

interface SettingsColumnProps {
  /** The user's enabled keys; null until loaded. */
  tokens: TokenRecord[] | null;
  /** The models of the user's group; null until loaded. */
  models: string[] | null;
  settings: Settings;
  setSettings: (settings: Settings) => void;
  /** What follows the settings (the page's "copy as" buttons). */
  children?: ReactNode;
}

/** The settings column, a section of the page labelled for screen readers. */
export function SettingsColumn({ tokens, models, settings, setSettings, children }: SettingsColumnProps) {
  const translate = useTranslate();
  return (
    <Stack component="section" aria-label={translate('playground.settings')} sx={{ gap: 2, width: { md: 320 }, flexShrink: 0 }}>
      <TextField
        select
        label={translate('playground.key')}
        value={tokens?.some((token) => String(token.id) === settings.tokenId) ? settings.tokenId : ''}
        onChange={(event) => setSettings({ ...settings, tokenId: event.target.value })}
        size="small"
        disabled={!tokens?.length}
        helperText={translate('playground.key_help')}
      >
        {(tokens ?? []).map((token) => (
          <MenuItem key={token.id} value={String(token.id)}>
            {token.name || `#${token.id}`}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        select
        label={translate('playground.model')}
        value={models?.includes(settings.model) ? settings.model : ''}
        onChange={(event) => setSettings({ ...settings, model: event.target.value })}
        size="small"
        disabled={!models?.length}
      >
        {(models ?? []).map((model) => (
          <MenuItem key={model} value={model} sx={{ fontFamily: 'monospace' }}>
            {model}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        label={translate('playground.system')}
        value={settings.system}
        onChange={(event) => setSettings({ ...settings, system: event.target.value })}
        placeholder={translate('playground.system_placeholder')}
        multiline
        minRows={3}
        maxRows={10}
        size="small"
      />
      <Box>
        <Typography id="playground-temperature" variant="body2" color="text.secondary">
          {translate('playground.temperature', { value: settings.temperature.toFixed(1) })}
        </Typography>
        <Slider
          aria-labelledby="playground-temperature"
          value={settings.temperature}
          onChange={(_event, value) => setSettings({ ...settings, temperature: value })}
          min={0}
          max={2}
          step={0.1}
          size="small"
        />
      </Box>
      <TextField
        label={translate('playground.max_tokens')}
        value={settings.maxTokens}
        onChange={(event) => setSettings({ ...settings, maxTokens: event.target.value.replace(/[^0-9]/g, '') })}
        placeholder={translate('playground.max_tokens_placeholder')}
        size="small"
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      {children}
    </Stack>
  );
}
