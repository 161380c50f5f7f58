// A value parsed from JSON, as text the way String() renders it: a string as
// itself, a number or boolean as its literal, an array joined with commas
// (null and undefined items empty), any other object as "[object Object]".
// The emulators and request views read untyped request bodies with it.
export function jsonText(value: unknown): string {
  if (Array.isArray(value)) return value.map((item: unknown) => (item === null || item === undefined ? '' : jsonText(item))).join(',');
  if (typeof value === 'object' && value !== null) return '[object Object]';
  if (typeof value === 'string') return value;
  if (typeof value === 'function' || typeof value === 'symbol') return value.toString();
  return String(value);
}
