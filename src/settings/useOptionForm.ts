// State of the admin settings tabs: the stored values (useStoredOptions), the
// local drafts of text fields, and the two ways of saving (useOptionSaves) —
// toggles at once, other fields by their section's button, sending only what
// changed.
import { useCallback, useEffect, useState, type Dispatch, type SetStateAction } from 'react';
import { OPTION_SPECS, isRootOnlyOption, isSecretOption, type OptionKey } from '../../common/options';
import { isAdmin, isRoot } from '../../common/roles';
import { readStoredUser } from '../dataProvider/storage';
import { settingsProvider as defaultProvider, type SettingsProvider } from '../dataProvider/settings';
import { useNotice } from '../layout/notice';
import { useStatus } from '../layout/status';
import { errorMessage } from '../dataProvider/errorMessage';
import { invalidChangeMessage, pendingChanges } from './saveRules';

type Values = Partial<Record<OptionKey, string>>;

export interface OptionForm {
  /** False until the stored values arrived. */
  loaded: boolean;
  /** The message when they could not be loaded. */
  loadError: string;
  /** Loads the stored values again (the Retry of the error state). */
  reload: () => void;
  /** Whether any field holds a draft not yet saved (leaving then asks first). */
  hasUnsavedChanges: boolean;
  /** What a field shows: its draft, else the stored value (secrets: the draft only). */
  value(key: OptionKey): string;
  stored(key: OptionKey): string;
  /** Whether a secret has a stored value. */
  secretSet(key: OptionKey): boolean;
  setDraft(key: OptionKey, value: string): void;
  /** Whether the caller may change the key (rootOnly keys need root). */
  canWrite(key: OptionKey): boolean;
  isDirty(keys: OptionKey[]): boolean;
  saveToggle(key: OptionKey, on: boolean): Promise<void>;
  saveSection(keys: OptionKey[]): Promise<void>;
  /**
   * Saves values made elsewhere than in the fields (the price table's rows),
   * replacing any draft of those keys; resolves whether all were saved.
   */
  saveValues(values: Partial<Record<OptionKey, string>>): Promise<boolean>;
  /** The provider the form loads and saves through (the price table reads its defaults from it too). */
  provider: SettingsProvider;
  /** The key or section being saved, for busy buttons. */
  saving: boolean;
}

/** Ratio tables one entry a line, as one-api showed them; an unchanged table is still not re-sent. */
function prettyJson(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** The stored values and which secrets are set, loaded again whenever `generation` changes. */
function useStoredOptions(enabled: boolean, provider: SettingsProvider, generation: number) {
  const [stored, setStored] = useState<Values>({});
  const [secretsSet, setSecretsSet] = useState<Partial<Record<OptionKey, boolean>>>({});
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState('');

  useEffect(() => {
    if (!enabled) return undefined;
    let active = true;
    setLoadError('');
    provider
      .getOptions()
      .then((rows) => {
        if (!active) return;
        const values: Values = {};
        const secrets: Partial<Record<OptionKey, boolean>> = {};
        for (const row of rows) {
          if (!(row.key in OPTION_SPECS)) continue;
          const key = row.key as OptionKey;
          if (isSecretOption(key)) secrets[key] = Boolean(row.set);
          else values[key] = OPTION_SPECS[key].kind === 'json' ? prettyJson(row.value) : row.value;
        }
        setStored(values);
        setSecretsSet(secrets);
        setLoaded(true);
      })
      .catch((error) => active && setLoadError(errorMessage(error)));
    return () => {
      active = false;
    };
  }, [enabled, provider, generation]);

  return { stored, setStored, secretsSet, setSecretsSet, loaded, loadError };
}

type Setter<T> = Dispatch<SetStateAction<T>>;

interface SaveState {
  provider: SettingsProvider;
  stored: Values;
  setStored: Setter<Values>;
  setSecretsSet: Setter<Partial<Record<OptionKey, boolean>>>;
  drafts: Values;
  setDrafts: Setter<Values>;
}

/** The three ways of saving (a toggle at once, a section's changed fields, values made elsewhere) and whether one runs. */
function useOptionSaves({ provider, stored, setStored, setSecretsSet, drafts, setDrafts }: SaveState) {
  const notice = useNotice();
  const { reload: reloadStatus } = useStatus();
  const [saving, setSaving] = useState(false);

  const saveToggle = useCallback(
    async (key: OptionKey, on: boolean) => {
      const previous = stored[key];
      setStored((values) => ({ ...values, [key]: String(on) }));
      try {
        await provider.updateOption(key, String(on));
        notice('settings.saved', 'success');
        reloadStatus();
      } catch (error) {
        setStored((values) => ({ ...values, [key]: previous }));
        notice(errorMessage(error), 'error');
      }
    },
    [provider, stored, setStored, notice, reloadStatus],
  );

  const saveSection = useCallback(
    async (keys: OptionKey[]) => {
      const changes = pendingChanges(keys, stored, drafts);
      if (changes.length === 0) return notice('settings.nothing_changed', 'info');
      const invalid = invalidChangeMessage(changes);
      if (invalid) return notice(invalid, 'error');
      setSaving(true);
      try {
        for (const change of changes) {
          await provider.updateOption(change.key, change.value);
          // what the server stored; secrets only as "set"
          if (isSecretOption(change.key)) setSecretsSet((values) => ({ ...values, [change.key]: true }));
          else setStored((values) => ({ ...values, [change.key]: change.value }));
          setDrafts((values) => {
            const next = { ...values };
            delete next[change.key];
            return next;
          });
        }
        notice('settings.saved', 'success');
      } catch (error) {
        notice(errorMessage(error), 'error');
      } finally {
        setSaving(false);
        reloadStatus();
      }
    },
    [provider, stored, drafts, setStored, setSecretsSet, setDrafts, notice, reloadStatus],
  );

  const saveValues = useCallback(
    async (values: Partial<Record<OptionKey, string>>) => {
      const changes = (Object.keys(values) as OptionKey[]).map((key) => ({ key, value: values[key] as string }));
      const invalid = invalidChangeMessage(changes);
      if (invalid) {
        notice(invalid, 'error');
        return false;
      }
      setSaving(true);
      try {
        for (const change of changes) {
          await provider.updateOption(change.key, change.value);
          setStored((stored) => ({ ...stored, [change.key]: change.value }));
          setDrafts((drafts) => {
            const next = { ...drafts };
            delete next[change.key];
            return next;
          });
        }
        notice('settings.saved', 'success');
        return true;
      } catch (error) {
        notice(errorMessage(error), 'error');
        return false;
      } finally {
        setSaving(false);
      }
    },
    [provider, setStored, setDrafts, notice],
  );

  return { saving, saveToggle, saveSection, saveValues };
}

/** `enabled`: whether to load the options at all (only admins may read them). */
export function useOptionForm(enabled: boolean, provider: SettingsProvider = defaultProvider): OptionForm {
  const [drafts, setDrafts] = useState<Values>({});
  const [generation, setGeneration] = useState(0);
  const { stored, setStored, secretsSet, setSecretsSet, loaded, loadError } = useStoredOptions(enabled, provider, generation);
  const { saving, saveToggle, saveSection, saveValues } = useOptionSaves({ provider, stored, setStored, setSecretsSet, drafts, setDrafts });
  const role = readStoredUser()?.role;

  const canWrite = useCallback((key: OptionKey) => (isRootOnlyOption(key) ? isRoot(role) : isAdmin(role)), [role]);

  return {
    loaded,
    loadError,
    reload: () => setGeneration((previous) => previous + 1),
    hasUnsavedChanges: pendingChanges(Object.keys(drafts) as OptionKey[], stored, drafts).length > 0,
    value: (key) => drafts[key] ?? (isSecretOption(key) ? '' : (stored[key] ?? '')),
    stored: (key) => stored[key] ?? '',
    secretSet: (key) => Boolean(secretsSet[key]),
    setDraft: (key, value) => setDrafts((values) => ({ ...values, [key]: value })),
    canWrite,
    isDirty: (keys) => pendingChanges(keys, stored, drafts).length > 0,
    saveToggle,
    saveSection,
    saveValues,
    provider,
    saving,
  };
}
