// The signed-in account's passkeys: each with its name, when it was added and
// last used, and a confirmed removal; and a named new one, made by the
// browser's own passkey dialog. Used on the Personal tab and on the screen an
// account is kept on until it has a second factor.
import { Alert, Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import { useState, type FormEvent } from 'react';
import { Confirm, useTranslate } from 'react-admin';
import type { PasskeyRecord } from '../../common/records';
import { dataProvider } from '../dataProvider';
import { browserHasPasskeys } from '../dataProvider/passkeyCalls';
import { formatTimestamp } from '../resources/shared/TimestampField';
import { PanelPending, useBusyRun, useLoadedState } from './AccountPanel';

const listPasskeys = () => dataProvider.listPasskeys();

/** The list and its requests: load, add under a name, remove. */
function usePasskeys(onAdded?: () => void) {
  const { value: passkeys, setValue: setPasskeys, loadError, load } = useLoadedState(listPasskeys);
  const { busy, run, notice } = useBusyRun();

  const add = (name: string) =>
    run(async () => {
      setPasskeys(await dataProvider.addPasskey(name));
      notice('passkey.added_notice', 'success');
      onAdded?.();
    });

  const remove = (passkey: PasskeyRecord) =>
    run(async () => {
      await dataProvider.removePasskey(passkey.id);
      notice('passkey.removed_notice', 'success');
      await load();
    });

  return { passkeys, loadError, load, busy, add, remove };
}

/** One passkey: its name, when it was added and last used, whether it syncs, and its remove button. */
function PasskeyItem({ passkey, busy, onRemove }: { passkey: PasskeyRecord; busy: boolean; onRemove: () => void }) {
  const translate = useTranslate();
  const lastUsed = passkey.last_used_at
    ? translate('passkey.last_used', { time: formatTimestamp(passkey.last_used_at) })
    : translate('passkey.never_used');
  return (
    <Box
      component="li"
      data-testid="passkey-item"
      sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1, p: 1.5, border: 1, borderColor: 'divider', borderRadius: 1 }}
    >
      <Box sx={{ flex: '1 1 220px', minWidth: 0 }}>
        <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{passkey.name}</Typography>
        <Typography variant="body2" color="text.secondary">
          {translate('passkey.created', { time: formatTimestamp(passkey.created_at) })} · {lastUsed}
        </Typography>
      </Box>
      {passkey.backed_up && <Chip size="small" label={translate('passkey.synced')} />}
      <Button
        variant="outlined"
        color="error"
        size="small"
        disabled={busy}
        aria-label={translate('passkey.remove_label', { name: passkey.name })}
        onClick={onRemove}
      >
        {translate('passkey.remove')}
      </Button>
    </Box>
  );
}

/** The name field and the button that starts the browser's passkey dialog. */
function AddPasskeyForm({ busy, onAdd }: { busy: boolean; onAdd: (name: string) => Promise<boolean> }) {
  const translate = useTranslate();
  const [name, setName] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    if (await onAdd(name.trim())) setName('');
  };
  if (!browserHasPasskeys()) return <Alert severity="info">{translate('passkey.unsupported')}</Alert>;
  return (
    <Box component="form" onSubmit={(event) => void submit(event)} noValidate>
      <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', alignItems: 'center' }}>
        <TextField
          size="small"
          margin="none"
          name="passkey-name"
          label={translate('passkey.name')}
          value={name}
          onChange={(event) => setName(event.target.value)}
          slotProps={{ htmlInput: { maxLength: 64 } }}
          sx={{ flex: '1 1 200px', maxWidth: 300 }}
        />
        <Button type="submit" variant="contained" disableElevation disabled={busy || !name.trim()} sx={{ whiteSpace: 'nowrap' }}>
          {translate('passkey.add')}
        </Button>
      </Stack>
    </Box>
  );
}

/** `onAdded`: a passkey was just registered (it counts as a second factor). */
export function PasskeyPanel({ onAdded }: { onAdded?: () => void }) {
  const translate = useTranslate();
  const { passkeys, loadError, load, busy, add, remove } = usePasskeys(onAdded);
  const [removing, setRemoving] = useState<PasskeyRecord | null>(null);

  if (loadError || !passkeys) return <PanelPending loadError={loadError} onRetry={() => void load()} />;

  return (
    <Stack spacing={2} data-testid="passkeys">
      {passkeys.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {translate('passkey.none')}
        </Typography>
      ) : (
        <Stack
          component="ul"
          spacing={1}
          aria-label={translate('passkey.list_label')}
          sx={{ listStyle: 'none', m: 0, p: 0, maxWidth: 640 }}
        >
          {passkeys.map((passkey) => (
            <PasskeyItem key={passkey.id} passkey={passkey} busy={busy} onRemove={() => setRemoving(passkey)} />
          ))}
        </Stack>
      )}
      <AddPasskeyForm busy={busy} onAdd={add} />
      <Confirm
        isOpen={removing !== null}
        loading={busy}
        title="passkey.remove_title"
        content="passkey.remove_content"
        translateOptions={{ name: removing?.name ?? '' }}
        confirm="passkey.remove"
        confirmColor="warning"
        onConfirm={() => {
          if (removing) void remove(removing).then(() => setRemoving(null));
        }}
        onClose={() => setRemoving(null)}
      />
    </Stack>
  );
}
