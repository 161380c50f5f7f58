// The channel form shared by /channel/add and /channel/edit/:id: type, name,
// base URL, the type's extra setting (`other`), key (one choice of how keys
// are used: one key, a channel per key, or one channel holding them all and
// how calls spread over them; the keys typed or read from a file), models,
// groups, model mapping, priority and weight.
import { Box, Button, MenuItem, Stack, TextField as MuiTextField, Typography } from '@mui/material';
import { useEffect, useMemo, useRef, useState } from 'react';
import {
  AutocompleteArrayInput,
  NumberInput,
  SelectInput,
  TextInput,
  useDataProvider,
  useInput,
  useTranslate,
  type TranslateFunction,
} from 'react-admin';
import { useFormContext, useWatch } from 'react-hook-form';
import { CHANNEL_TYPES, findChannelType, keyFitsFormat, otherMissing } from '../../../common/channelTypes';
import { compactJsonKeys } from '../../../common/serviceAccountKey';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { KeysFileButton } from './ChannelKeyList';
import { useLoadedList } from '../shared/useLoadedList';
import { textOf } from '../shared/textOf';

export const MAPPING_EXAMPLE = JSON.stringify(
  { 'gpt-3.5-turbo-0301': 'gpt-3.5-turbo', 'gpt-4-0314': 'gpt-4', 'gpt-4-32k-0314': 'gpt-4-32k' },
  null,
  2,
);

export const CHANNEL_DEFAULTS = {
  type: 1,
  name: '',
  base_url: '',
  other: '',
  key: '',
  key_mode: 'single' as KeyMode,
  models: [] as string[],
  groups: ['default'],
  model_mapping: '',
  test_model: '',
  priority: 0,
  weight: 1,
};

const splitNames = (text: unknown) =>
  textOf(text)
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
const unique = (names: string[]) => [...new Set(names)];

/**
 * How the form's keys are used, one choice: one key, a channel per key line
 * (one-api's batch), or one channel holding them all, a random key per call
 * or the keys in turn.
 */
export type KeyMode = 'single' | 'batch' | 'random' | 'round_robin';
const KEY_MODES: readonly KeyMode[] = ['single', 'batch', 'random', 'round_robin'];

/** The form's key mode (also read from the older `batch`, `multi_key` and `key_strategy` values). */
export function keyModeOf(values: Record<string, unknown>): KeyMode {
  if (KEY_MODES.includes(values.key_mode as KeyMode)) return values.key_mode as KeyMode;
  if (values.multi_key === true) return values.key_strategy === 'round_robin' ? 'round_robin' : 'random';
  return values.batch === true ? 'batch' : 'single';
}

const holdsKeys = (mode: KeyMode) => mode === 'random' || mode === 'round_robin';

/** A record from the API → the form's values (lists for models and groups, an empty key). */
export function channelFormValues(record: Record<string, unknown>) {
  const mapping = textOf(record.model_mapping).trim();
  let mappingText = mapping === '{}' ? '' : mapping;
  try {
    if (mappingText) mappingText = JSON.stringify(JSON.parse(mappingText), null, 2);
  } catch {
    // shown as stored; validation asks for a fix
  }
  return {
    ...record,
    key: '',
    key_mode: record.multi_key === true ? keyModeOf(record) : 'single',
    other: textOf(record.other),
    base_url: textOf(record.base_url),
    models: splitNames(record.models),
    groups: splitNames(record.group).length ? splitNames(record.group) : ['default'],
    model_mapping: mappingText,
    test_model: textOf(record.test_model),
    priority: Number(record.priority ?? 0),
    weight: Number(record.weight ?? 1),
  };
}

function mappingIsValid(text: string): boolean {
  if (!text.trim()) return true;
  try {
    const parsed: unknown = JSON.parse(text);
    return (
      Boolean(parsed) &&
      typeof parsed === 'object' &&
      !Array.isArray(parsed) &&
      Object.values(parsed as object).every((value) => typeof value === 'string')
    );
  } catch {
    return false;
  }
}

const bareBaseUrl = (value: unknown) => textOf(value).trim().replace(/\/+$/, '');

/** True when an edit points the channel elsewhere (base URL or type), which the server allows only with the key. */
export function channelMoved(values: Record<string, unknown>, original: { base_url?: unknown; type?: unknown } | undefined): boolean {
  if (!original) return false;
  return bareBaseUrl(values.base_url) !== bareBaseUrl(original.base_url) || Number(values.type) !== Number(original.type);
}

/** The key as typed, with a JSON key file (Vertex AI's, pasted over many lines) on one line, as the server stores it. */
function keyTextOf(type: unknown, key: unknown): string {
  return findChannelType(Number(type))?.keyKind === 'service-account-json' ? compactJsonKeys(textOf(key)) : textOf(key);
}

type FormError = string | { message: string; args: Record<string, string> };

/** The key field's error: missing (on create, or after a move), or a line not in the type's key format. */
function keyErrorOf(values: Record<string, unknown>, creating: boolean, original?: { base_url?: unknown; type?: unknown }) {
  const empty = !textOf(values.key).trim();
  if (creating && empty) return 'app.channel.name_key_required';
  if (!creating && empty && channelMoved(values, original)) return 'app.channel.key_needed_after_move';
  const keyFormat = findChannelType(Number(values.type))?.keyFormat;
  const keys = keyTextOf(values.type, values.key)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  if (keyFormat && !keys.every((key) => keyFitsFormat(Number(values.type), key))) {
    return { message: 'app.channel.key_format_invalid', args: { format: keyFormat } };
  }
  return undefined;
}

/** The channel form's checks; on edit an empty key keeps the stored one, unless the channel moves. */
export function validateChannelForm(creating: boolean, original?: { base_url?: unknown; type?: unknown }) {
  return (values: Record<string, unknown>) => {
    const errors: Record<string, FormError> = {};
    if (!textOf(values.name).trim()) errors.name = 'app.channel.name_key_required';
    const keyError = keyErrorOf(values, creating, original);
    if (keyError) errors.key = keyError;
    if (!Array.isArray(values.models) || values.models.length === 0) errors.models = 'app.channel.models_required';
    if (!mappingIsValid(textOf(values.model_mapping))) errors.model_mapping = 'app.channel.mapping_invalid';
    if (findChannelType(Number(values.type))?.baseUrlRequired && !textOf(values.base_url).trim())
      errors.base_url = 'app.channel.base_url_required';
    if (otherMissing(Number(values.type), textOf(values.other), textOf(values.base_url))) errors.other = 'app.channel.other_required';
    if (!Number.isInteger(Number(values.priority))) errors.priority = 'app.channel.priority_invalid';
    if (!Number.isInteger(Number(values.weight)) || Number(values.weight) < 1) errors.weight = 'app.channel.weight_invalid';
    return errors;
  };
}

/** Form values → the API's body: comma strings, a bare base URL, `{}` for no mapping. */
export function channelTransform(values: Record<string, unknown>) {
  const type = Number(values.type);
  const other = textOf(values.other).trim();
  const key = keyTextOf(type, values.key)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
  return {
    ...(values.id === undefined ? {} : { id: values.id }),
    type,
    name: textOf(values.name).trim(),
    key,
    base_url: textOf(values.base_url).trim().replace(/\/+$/, ''),
    other: other || findChannelType(type)?.other?.fallback || '',
    models: unique((values.models as string[] | undefined) ?? []).join(','),
    group: unique((values.groups as string[] | undefined) ?? []).join(',') || 'default',
    model_mapping: textOf(values.model_mapping).trim() || '{}',
    // a test model the models list no longer holds falls back to the first, as the server would
    test_model: ((values.models as string[] | undefined) ?? []).includes(textOf(values.test_model)) ? textOf(values.test_model) : '',
    priority: Number(values.priority ?? 0),
    weight: Number(values.weight ?? 1),
    // only a multi-key channel says so: without the flag the server keeps one-api's wire (a channel per key line)
    ...(holdsKeys(keyModeOf(values)) ? { multi_key: true, key_strategy: keyModeOf(values) } : {}),
  };
}

/** Choosing a type while no model is selected pre-fills that type's usual models. */
function DefaultModelsOnTypeChange() {
  const type = Number(useWatch({ name: 'type' }));
  const { getValues, setValue } = useFormContext();
  const previous = useRef(type);
  useEffect(() => {
    if (previous.current === type) return;
    previous.current = type;
    const chosen = getValues('models') as string[] | undefined;
    const defaults = findChannelType(type)?.defaultModels ?? [];
    if ((!chosen || chosen.length === 0) && defaults.length) setValue('models', [...defaults], { shouldDirty: true, shouldValidate: true });
  }, [type, getValues, setValue]);
  return null;
}

function ModelShortcuts({ available }: { available: string[] }) {
  const translate = useTranslate();
  const { getValues, setValue } = useFormContext();
  const [custom, setCustom] = useState('');
  const setModels = (models: string[]) => setValue('models', unique(models), { shouldDirty: true, shouldValidate: true });
  const chosen = () => (getValues('models') as string[] | undefined) ?? [];
  const addCustom = () => {
    const names = splitNames(custom);
    if (!names.length) return;
    setModels([...chosen(), ...names]);
    setCustom('');
  };
  return (
    <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1, mb: 2, alignItems: { sm: 'center' }, flexWrap: 'wrap' }}>
      <Stack direction="row" sx={{ gap: 1, flexWrap: 'wrap' }}>
        <Button
          size="small"
          variant="outlined"
          onClick={() => setModels([...chosen(), ...available.filter((name) => name.startsWith('gpt-3') || name.startsWith('text-'))])}
        >
          {translate('app.channel.fill_base_models')}
        </Button>
        <Button size="small" variant="outlined" onClick={() => setModels([...chosen(), ...available])}>
          {translate('app.channel.fill_all_models')}
        </Button>
        <Button size="small" color="warning" onClick={() => setModels([])}>
          {translate('app.channel.clear_models')}
        </Button>
      </Stack>
      <Stack direction="row" sx={{ gap: 1, flexGrow: 1, alignItems: 'center', minWidth: { sm: 260 } }}>
        <MuiTextField
          size="small"
          value={custom}
          label={translate('app.channel.custom_model')}
          placeholder={translate('app.channel.custom_model_placeholder')}
          onChange={(event) => setCustom(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              addCustom();
            }
          }}
          sx={{ flexGrow: 1 }}
        />
        <Button size="small" variant="outlined" onClick={addCustom} disabled={!custom.trim()}>
          {translate('app.channel.add_model')}
        </Button>
      </Stack>
    </Stack>
  );
}

interface KeyHelpCase {
  creating: boolean;
  mode: KeyMode;
  /** Editing a channel that already holds its keys (they are added in its key list). */
  holding: boolean;
  moved: boolean;
  keyFormat: string | undefined;
}

/** The key field's help: how to enter several keys, the type's key format, or what an empty key does on edit. */
function keyHelpOf({ creating, mode, holding, moved, keyFormat }: KeyHelpCase, translate: TranslateFunction): string {
  if (holding) return 'app.channel.key_multi_replace_help';
  if (holdsKeys(mode)) return 'app.channel.key_multi_help';
  if (!creating) return moved ? 'app.channel.key_needed_after_move' : 'app.channel.key_keep';
  if (mode === 'batch') return 'app.channel.key_batch_help';
  return keyFormat ? translate('app.channel.key_format', { format: keyFormat }) : 'app.channel.key_help';
}

/** The base URL's help: Azure's resource URL, a required URL, the type's default, or optional. */
function baseUrlHelpOf(channelType: ReturnType<typeof findChannelType>, translate: TranslateFunction): string {
  const defaultBaseUrl = channelType?.defaultBaseUrl ?? '';
  if (channelType?.protocol === 'azure') return 'app.channel.base_url_azure';
  if (channelType?.baseUrlRequired) return 'app.channel.base_url_custom';
  return defaultBaseUrl ? translate('app.channel.base_url_default', { url: defaultBaseUrl }) : 'app.channel.base_url_optional';
}

/**
 * The one choice of how keys are used. Not react-admin's SelectInput: it adds
 * an empty item of its own, and a channel always uses its keys one way.
 */
function KeyModeSelect({ holding }: { holding: boolean }) {
  const translate = useTranslate();
  const { id, field } = useInput({ source: 'key_mode', defaultValue: 'single' });
  const modes = holding ? KEY_MODES.filter(holdsKeys) : KEY_MODES;
  return (
    <MuiTextField
      select
      id={id}
      name={field.name}
      inputRef={field.ref}
      value={keyModeOf({ key_mode: field.value })}
      onChange={(event) => field.onChange(event.target.value)}
      onBlur={field.onBlur}
      label={translate('app.channel.key_mode')}
      helperText={translate(holding ? 'app.channel.key_mode_holding_help' : 'app.channel.key_mode_help')}
      margin="dense"
      fullWidth
    >
      {modes.map((mode) => (
        <MenuItem key={mode} value={mode}>
          {translate(`app.channel.key_mode_${mode}`)}
        </MenuItem>
      ))}
    </MuiTextField>
  );
}

/**
 * The key inputs: one choice of how the keys are used (on create; on the edit
 * of a channel holding keys, only how calls spread over them), and one place
 * for keys: the key box (with a keys file) on create and on a single-key
 * channel's edit; a channel holding keys adds them in its key list under the
 * form, so its box shows only when a move needs all its keys again.
 */
function KeyInputs({ creating }: { creating: boolean }) {
  const translate = useTranslate();
  const notice = useNotice();
  const { formState, setValue, getValues } = useFormContext();
  const type = Number(useWatch({ name: 'type' }));
  const mode = keyModeOf({ key_mode: useWatch({ name: 'key_mode' }) });
  const baseUrl: unknown = useWatch({ name: 'base_url' });
  const holding = !creating && formState.defaultValues?.multi_key === true;
  const moved = !creating && channelMoved({ base_url: baseUrl, type }, formState.defaultValues);
  const keyFormat = findChannelType(type)?.keyFormat;
  // a JSON key file is pasted over many lines (and is not a password to hide as it is typed)
  const lines = mode !== 'single' || findChannelType(type)?.keyKind === 'service-account-json';
  // the one place for keys: a channel holding keys adds them in its key list, so its box is only for a move
  const showBox = !holding || moved;
  const keyHelp = keyHelpOf({ creating, mode, holding, moved, keyFormat }, translate);
  const appendKeys = (text: string) => {
    const keys = text.trim();
    if (!keys) return;
    setValue('key', [textOf(getValues('key')).trim(), keys].filter(Boolean).join('\n'), { shouldDirty: true, shouldValidate: true });
    notice('app.channel.keys_file_read', 'info', { smart_count: keys.split('\n').filter((line) => line.trim()).length });
  };
  return (
    <>
      {(creating || holding) && <KeyModeSelect holding={holding} />}
      {showBox && (
        <TextInput
          source="key"
          label={holding ? 'app.channel.keys_again' : undefined}
          type={lines ? undefined : 'password'}
          multiline={lines}
          minRows={lines ? 4 : undefined}
          placeholder={keyFormat ?? (creating ? undefined : translate('app.channel.key_keep'))}
          helperText={keyHelp}
          autoComplete="new-password"
          fullWidth
        />
      )}
      {showBox && mode !== 'single' && (
        <Box sx={{ mb: 2 }}>
          <KeysFileButton onText={appendKeys} />
        </Box>
      )}
    </>
  );
}

/** The routing inputs: models (with shortcuts), the test model, groups, the model mapping, priority and weight. */
function RoutingInputs() {
  const translate = useTranslate();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const availableModels = useLoadedList(dataProvider.channelModels);
  const availableGroups = useLoadedList(dataProvider.groups);
  const chosenModels = (useWatch({ name: 'models' }) as string[] | undefined) ?? [];
  const chosenGroups = (useWatch({ name: 'groups' }) as string[] | undefined) ?? [];
  const modelChoices = unique([...availableModels, ...chosenModels]).map((name) => ({ id: name, name }));
  const groupChoices = unique(['default', ...availableGroups, ...chosenGroups]).map((name) => ({ id: name, name }));
  return (
    <>
      <Typography variant="subtitle2" component="h2" sx={{ mt: 1 }}>
        {translate('app.channel.routing')}
      </Typography>
      <AutocompleteArrayInput source="models" choices={modelChoices} helperText="app.channel.models_help" fullWidth />
      <ModelShortcuts available={availableModels} />
      <SelectInput
        source="test_model"
        choices={unique(chosenModels).map((name) => ({ id: name, name }))}
        emptyText="app.channel.test_model_first"
        emptyValue=""
        helperText="app.channel.test_model_help"
        translateChoice={false}
        fullWidth
      />
      <AutocompleteArrayInput source="groups" choices={groupChoices} helperText="app.channel.groups_help" fullWidth />
      <TextInput
        source="model_mapping"
        multiline
        minRows={5}
        placeholder={MAPPING_EXAMPLE}
        helperText="app.channel.mapping_help"
        // the example is the placeholder, so the label must not sit on top of it
        slotProps={{ inputLabel: { shrink: true } }}
        sx={{ '& textarea': { fontFamily: 'monospace' } }}
        fullWidth
      />
      <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ gap: { sm: 2 } }}>
        <NumberInput source="priority" step={1} helperText="app.channel.priority_help" fullWidth />
        <NumberInput source="weight" step={1} min={1} helperText="app.channel.weight_help" fullWidth />
      </Stack>
    </>
  );
}

/** The channel form's inputs (create and edit): type, name, base URL, the type's extra setting, keys, routing. */
export function ChannelInputs({ creating = false }: { creating?: boolean }) {
  const translate = useTranslate();
  const type = Number(useWatch({ name: 'type' }));
  const typeChoices = useMemo(
    () => CHANNEL_TYPES.map((channelType) => ({ id: channelType.value, name: `${channelType.label} (${channelType.value})` })),
    [],
  );
  const channelType = findChannelType(type);
  const otherSetting = channelType?.other;
  const defaultBaseUrl = channelType?.defaultBaseUrl ?? '';

  return (
    <Box sx={{ width: '100%', maxWidth: 720 }}>
      <DefaultModelsOnTypeChange />
      <SelectInput source="type" choices={typeChoices} fullWidth />
      <TextInput source="name" fullWidth />
      <TextInput
        source="base_url"
        helperText={baseUrlHelpOf(channelType, translate)}
        placeholder={defaultBaseUrl || 'https://'}
        fullWidth
      />
      {otherSetting && (
        <TextInput
          source="other"
          label={otherSetting.label}
          placeholder={otherSetting.fallback}
          helperText={otherSetting.required ? 'app.channel.other_required_help' : 'app.channel.other_help'}
          fullWidth
        />
      )}
      <KeyInputs creating={creating} />
      <RoutingInputs />
    </Box>
  );
}
