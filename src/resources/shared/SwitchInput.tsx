// react-admin's BooleanInput with MUI 9's props: react-admin 5.15 hands the
// field's ref to FormControlLabel as `inputRef`, which MUI 9 no longer takes
// (it reached the DOM, and focusing the field on a validation error missed).
// Here the ref goes to the checkbox itself through `slotProps.input`.
import { FormControlLabel, FormGroup, FormHelperText, Switch } from '@mui/material';
import { FieldTitle, InputHelperText, useInput, type InputProps } from 'react-admin';

export function SwitchInput({ source, label, helperText, disabled }: Pick<InputProps, 'source' | 'label' | 'helperText' | 'disabled'>) {
  const { id, field, fieldState, isRequired } = useInput({ source, type: 'checkbox' });
  return (
    <FormGroup className={`ra-input ra-input-${source}`}>
      <FormControlLabel
        label={<FieldTitle label={label} source={source} isRequired={isRequired} />}
        control={
          <Switch
            id={id}
            name={field.name}
            checked={Boolean(field.value)}
            onChange={(event) => field.onChange(event.target.checked)}
            onBlur={field.onBlur}
            disabled={disabled}
            color="primary"
            slotProps={{ input: { ref: field.ref } }}
          />
        }
      />
      {(helperText || fieldState.error) && (
        <FormHelperText error={fieldState.invalid}>
          <InputHelperText error={fieldState.error?.message} helperText={helperText} />
        </FormHelperText>
      )}
    </FormGroup>
  );
}
