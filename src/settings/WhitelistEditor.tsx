// A list option as chips (the e-mail domain whitelist, the retried statuses,
// the groups refused a tool): an entry is added only when it is not empty and
// not already listed; the list is saved with its section.
import AddIcon from '@mui/icons-material/Add';
import { Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslate } from 'react-admin';
import type { OptionKey } from '../../common/options';
import { useNotice } from '../layout/notice';
import { addToList, splitList } from './saveRules';
import { optionLabel } from './sections';
import type { OptionForm } from './useOptionForm';

/** What an entry of each list looks like, shown in its empty field. */
const PLACEHOLDERS: Partial<Record<OptionKey, string>> = { RetryableStatusCodes: '429', ToolRefusalGroups: 'default' };

export function WhitelistEditor({ form, optionKey }: { form: OptionForm; optionKey: OptionKey }) {
  const translate = useTranslate();
  const notice = useNotice();
  const [entry, setEntry] = useState('');
  const list = form.value(optionKey);
  const items = splitList(list);
  const writable = form.canWrite(optionKey);

  const add = () => {
    const next = addToList(list, entry);
    if (next === undefined) {
      if (entry.trim() !== '') notice('settings.whitelist.duplicate', 'warning');
      return;
    }
    form.setDraft(optionKey, next);
    setEntry('');
  };

  return (
    <Box>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {optionLabel(translate, optionKey)}
      </Typography>
      {items.length === 0 ? (
        // an empty list is a sentence, not a list without items (which screen readers and axe refuse)
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
          {translate('settings.whitelist.empty')}
        </Typography>
      ) : (
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.75, mb: 1.5 }} aria-label={optionLabel(translate, optionKey)} role="list">
          {items.map((item) => (
            <Chip
              key={item}
              role="listitem"
              label={item}
              onDelete={writable ? () => form.setDraft(optionKey, items.filter((other) => other !== item).join(',')) : undefined}
            />
          ))}
        </Box>
      )}
      <Stack direction="row" spacing={1} sx={{ maxWidth: 420 }}>
        <TextField
          size="small"
          hiddenLabel
          fullWidth
          name={`${optionKey}-entry`}
          placeholder={PLACEHOLDERS[optionKey] ?? translate('settings.whitelist.placeholder')}
          value={entry}
          disabled={!writable}
          onChange={(event) => setEntry(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              add();
            }
          }}
        />
        <Button variant="outlined" startIcon={<AddIcon />} onClick={add} disabled={!writable} sx={{ flexShrink: 0 }}>
          {translate('settings.whitelist.add')}
        </Button>
      </Stack>
    </Box>
  );
}
