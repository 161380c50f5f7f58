import { useRecordContext, useTranslate } from 'react-admin';
import { useStatus } from '../../layout/status';
import { formatQuota } from '../../quota';

/** Quota per spec §9; `unlimitedSource` names a boolean that makes it read "Unlimited". */
export function QuotaField({ source, unlimitedSource, digits }: { source: string; unlimitedSource?: string; digits?: number; label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { status } = useStatus();
  if (unlimitedSource && record?.[unlimitedSource]) return <span>{translate('app.common.unlimited')}</span>;
  return <span>{formatQuota(Number(record?.[source] ?? 0), status, digits)}</span>;
}
