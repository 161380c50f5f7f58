// The user form's group: the groups GroupRatio prices (GET /api/group/)
// offered as choices, and any other name typed in, since a group needs no
// ratio to exist (it is then billed at ratio 1, and uses the "default" rate
// limits).
import { Autocomplete, TextField } from '@mui/material';
import { useDataProvider, useInput, useTranslate } from 'react-admin';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useLoadedList } from '../shared/useLoadedList';

export function GroupInput() {
  const translate = useTranslate();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const groups = useLoadedList(dataProvider.groups);
  const { field } = useInput({ source: 'group' });
  const value = typeof field.value === 'string' ? field.value : '';
  const options = [...new Set(['default', ...groups, ...(value ? [value] : [])])];
  return (
    <Autocomplete
      freeSolo
      options={options}
      value={value}
      inputValue={value}
      onInputChange={(_, typed) => field.onChange(typed)}
      onChange={(_, chosen) => field.onChange(typeof chosen === 'string' ? chosen : '')}
      renderInput={(params) => (
        <TextField
          {...params}
          name="group"
          label={translate('resources.user.fields.group')}
          helperText={translate('app.user_edit.group_help')}
          onBlur={field.onBlur}
          sx={{ mb: 1 }}
        />
      )}
      fullWidth
    />
  );
}
