import { Box, Tooltip } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';
import { useStatus } from '../../layout/status';
import { formatQuota } from '../../quota';

/** Quota in the status's display unit; `unlimitedSource` names a boolean that makes it read "Unlimited"; a `balance` below zero reads as owed. */
export function QuotaField({
  source,
  unlimitedSource,
  digits,
  balance,
}: {
  source: string;
  unlimitedSource?: string;
  digits?: number;
  balance?: boolean;
  label?: string;
  sortable?: boolean;
}) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { status } = useStatus();
  if (unlimitedSource && record?.[unlimitedSource]) return <span>{translate('app.common.unlimited')}</span>;
  if (balance) return <Balance quota={Number(record?.[source] ?? 0)} digits={digits} />;
  return <span>{formatQuota(Number(record?.[source] ?? 0), status, digits)}</span>;
}

/**
 * A balance. Below zero it is money owed (a provider overran a request's
 * limit and the excess was charged in full): shown in red as "owed $x".
 */
export function Balance({ quota, digits }: { quota: number; digits?: number }) {
  const translate = useTranslate();
  const { status } = useStatus();
  if (quota >= 0) return <span>{formatQuota(quota, status, digits)}</span>;
  return (
    <Tooltip title={translate('app.common.owed_help')}>
      <Box component="span" sx={{ color: 'error.main', fontWeight: 600 }} data-testid="quota-owed">
        {translate('app.common.owed', { amount: formatQuota(-quota, status, digits) })}
      </Box>
    </Tooltip>
  );
}
