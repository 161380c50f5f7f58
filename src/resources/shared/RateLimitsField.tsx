// Per-minute rate limits in lists and forms: what limits a key in effect
// (its own and its account's together, computed by the server), and the
// form value of an override (empty inherits).
import { useRecordContext, useTranslate } from 'react-admin';
import { textOf } from './textOf';

/** A rate-limit field → the wire: empty is null (inherit), else the whole number typed. */
export function rateLimitValue(value: unknown): number | null {
  if (value === null || value === undefined || textOf(value).trim() === '') return null;
  const parsed = Number.parseInt(textOf(value), 10);
  return Number.isNaN(parsed) ? null : parsed;
}

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** "600 RPM · 100K TPM", one of them, or "Unlimited" (from the record's `rate_limits`). */
export function RateLimitsField(_: { label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const limits = record?.rate_limits as { rpm: number; tpm: number } | undefined;
  const parts = [
    limits?.rpm ? translate('app.rate_limits.rpm', { count: compact.format(limits.rpm) }) : '',
    limits?.tpm ? translate('app.rate_limits.tpm', { count: compact.format(limits.tpm) }) : '',
  ].filter(Boolean);
  return <span data-testid="rate-limits">{parts.length > 0 ? parts.join(' · ') : translate('app.common.unlimited')}</span>;
}
