// Two-factor sign-in for the signed-in account: set it up (QR code and the
// secret as text, then a code from the app to turn it on), the ten recovery
// codes shown once, and turning it off with a code. This file holds the state
// and requests (useTwoFactor) and picks the view; the views are in
// TwoFactorViews.tsx. The secret and the recovery codes live only in this
// component's state: the server never sends them again.
import { useState, type FormEvent } from 'react';
import type { TwoFactorEnrolment } from '../../common/records';
import { dataProvider } from '../dataProvider';
import { copyText } from '../resources/shared/clipboard';
import { PanelPending, useBusyRun, useLoadedState } from './AccountPanel';
import { EnrolmentView, RecoveryCodesView, TwoFactorOffView, TwoFactorOnView } from './TwoFactorViews';

const twoFactorStatus = () => dataProvider.twoFactorStatus();

/** The panel's state and its requests: load the status, start setting up, confirm, turn off, copy the codes. */
function useTwoFactor(onConfirmed?: () => void) {
  const { value: status, loadError, load } = useLoadedState(twoFactorStatus);
  const { busy, run, notice } = useBusyRun();
  const [enrolment, setEnrolment] = useState<TwoFactorEnrolment | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');

  const start = () =>
    run(async () => {
      setEnrolment(await dataProvider.twoFactorEnrol());
      setCode('');
    });

  const confirm = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    return run(async () => {
      setRecoveryCodes(await dataProvider.twoFactorConfirm(code.trim()));
      setEnrolment(null);
      setCode('');
      onConfirmed?.();
      notice('app.two_factor.enabled_notice', 'success');
      await load();
    });
  };

  const disable = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    return run(async () => {
      await dataProvider.twoFactorDisable(code.trim());
      setCode('');
      notice('app.two_factor.disabled_notice', 'success');
      await load();
    });
  };

  const copyCodes = async () => {
    const text = (recoveryCodes ?? []).join('\n');
    if (await copyText(text)) notice('app.two_factor.codes_copied', 'success');
    else notice('app.errors.copy_manually', 'warning', { value: text });
  };

  return {
    status,
    loadError,
    load,
    enrolment,
    setEnrolment,
    recoveryCodes,
    setRecoveryCodes,
    entry: { code, setCode, busy },
    start,
    confirm,
    disable,
    copyCodes,
  };
}

/** `onConfirmed`: two-factor sign-in just turned on; `onEnabled`: its recovery codes were put away too. */
export function TwoFactorPanel({ onConfirmed, onEnabled }: { onConfirmed?: () => void; onEnabled?: () => void }) {
  const { status, loadError, load, enrolment, setEnrolment, recoveryCodes, setRecoveryCodes, entry, start, confirm, disable, copyCodes } =
    useTwoFactor(onConfirmed);

  if (loadError || !status) return <PanelPending loadError={loadError} onRetry={() => void load()} />;

  if (recoveryCodes) {
    return (
      <RecoveryCodesView
        recoveryCodes={recoveryCodes}
        onCopy={() => void copyCodes()}
        onSaved={() => {
          setRecoveryCodes(null);
          onEnabled?.();
        }}
      />
    );
  }
  if (status.enabled) return <TwoFactorOnView status={status} entry={entry} onDisable={(event) => void disable(event)} />;
  if (enrolment) {
    return (
      <EnrolmentView enrolment={enrolment} entry={entry} onConfirm={(event) => void confirm(event)} onCancel={() => setEnrolment(null)} />
    );
  }
  return <TwoFactorOffView required={status.required} busy={entry.busy} onStart={() => void start()} />;
}
