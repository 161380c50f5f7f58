// The public status object (/api/status), loaded once per page load and cached
// in localStorage under the spec's keys so the header renders before it arrives.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { ClientStatus } from '../../common/options';
import { dataProvider } from '../dataProvider';

export const DEFAULT_SYSTEM_NAME = 'Switchboard';
export const DEFAULT_LOGO = '/logo.png';

export interface StatusState {
  status: ClientStatus | null;
  /** True when the last load failed (the cached copy, if any, is still shown). */
  failed: boolean;
  /** Loads the status again, e.g. after an admin changed a setting it reflects. */
  reload: () => void;
}

const StatusContext = createContext<StatusState>({ status: null, failed: false, reload: () => undefined });

function readCachedStatus(): ClientStatus | null {
  try {
    const raw = localStorage.getItem('status');
    return raw ? (JSON.parse(raw) as ClientStatus) : null;
  } catch {
    return null;
  }
}

export function cacheStatus(status: ClientStatus): void {
  localStorage.setItem('status', JSON.stringify(status));
  localStorage.setItem('system_name', status.system_name || DEFAULT_SYSTEM_NAME);
  localStorage.setItem('logo', status.logo || DEFAULT_LOGO);
  localStorage.setItem('footer_html', status.footer_html ?? '');
  localStorage.setItem('quota_per_unit', String(status.quota_per_unit));
  localStorage.setItem('display_in_currency', String(status.display_in_currency));
  if (status.chat_link) localStorage.setItem('chat_link', status.chat_link);
  else localStorage.removeItem('chat_link');
}

export function StatusProvider({ children, load = dataProvider.getStatus }: { children: ReactNode; load?: () => Promise<ClientStatus> }) {
  const [state, setState] = useState<Omit<StatusState, 'reload'>>(() => ({ status: readCachedStatus(), failed: false }));
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((previous) => previous + 1), []);
  useEffect(() => {
    let active = true;
    load()
      .then((status) => {
        if (!active) return;
        cacheStatus(status);
        setState({ status, failed: false });
      })
      .catch(() => active && setState((previous) => ({ ...previous, failed: true })));
    return () => {
      active = false;
    };
  }, [load, generation]);
  const value = useMemo(() => ({ ...state, reload }), [state, reload]);
  return <StatusContext.Provider value={value}>{children}</StatusContext.Provider>;
}

export function useStatus(): StatusState {
  return useContext(StatusContext);
}

export function systemNameOf(status: ClientStatus | null): string {
  return status?.system_name || localStorage.getItem('system_name') || DEFAULT_SYSTEM_NAME;
}

export function logoOf(status: ClientStatus | null): string {
  return status?.logo || localStorage.getItem('logo') || DEFAULT_LOGO;
}
