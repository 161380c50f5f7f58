import { useRecordContext, useTranslate } from 'react-admin';

/** Epoch seconds as YYYY-MM-DD HH:MM:SS in the browser's time zone. */
export function formatTimestamp(seconds: number): string {
  const date = new Date(seconds * 1000);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function TimestampField({ source, neverLabel }: { source: string; neverLabel?: string; label?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const value = Number(record?.[source] ?? 0);
  if (value === -1 && neverLabel) return <span>{translate(neverLabel)}</span>;
  if (!value) return <span>—</span>;
  return <span>{formatTimestamp(value)}</span>;
}
