// The user forms' group. The edit offers the groups GroupRatio prices (GET
// /api/group/) as choices, and any other name typed in, since a group needs no
// ratio to exist (it is then billed at ratio 1, and uses the "default" rate
// limits). The create offers only the groups that exist.
import { Autocomplete, TextField } from '@mui/material';
import { required, SelectInput, useDataProvider, useInput, useTranslate } from 'react-admin';
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

const groupRequired = [required('app.user.group_required')];

/**
 * The create form's group: a choice among the groups that exist ("default"
 * and the groups GroupRatio names), as the server accepts only those at
 * creation. Starts at "default".
 */
export function GroupSelect() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const groups = useLoadedList(dataProvider.groups);
  const choices = [...new Set(['default', ...groups])].map((name) => ({ id: name, name }));
  return (
    <SelectInput
      source="group"
      label="resources.user.fields.group"
      choices={choices}
      translateChoice={false}
      defaultValue="default"
      validate={groupRequired}
      helperText="app.user.group_pick_help"
      fullWidth
    />
  );
}
