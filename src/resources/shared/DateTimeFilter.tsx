// A filter on a time (the log's and the audit log's window): the browser's
// date-and-time field, holding the filter as epoch seconds.
import { TextInput } from 'react-admin';
import { formatTimestamp } from './TimestampField';

/** Epoch seconds ↔ the value of an <input type="datetime-local"> (local time, minutes). */
const toLocalInput = (seconds: unknown) => (Number(seconds) > 0 ? formatTimestamp(Number(seconds)).replace(' ', 'T').slice(0, 16) : '');
const fromLocalInput = (text: string) => {
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : Math.floor(parsed / 1000);
};

export function DateTimeFilter({ source, label }: { source: string; label: string; alwaysOn?: boolean }) {
  return (
    <TextInput
      source={source}
      label={label}
      type="datetime-local"
      format={toLocalInput}
      parse={fromLocalInput}
      slotProps={{ inputLabel: { shrink: true } }}
      helperText={false}
    />
  );
}
