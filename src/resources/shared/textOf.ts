// Form values, list filters and records reach the console untyped; this reads one as text.

/**
 * A value as text, exactly as `String(value ?? '')` gives it for every JSON value (what forms, list
 * filters and API records hold): '' for null and undefined, strings as they are, numbers and booleans
 * printed, arrays joined with commas, and any other object '[object Object]' (what String() prints).
 */
export function textOf(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      if (value === null) return '';
      return Array.isArray(value) ? value.map(textOf).join(',') : '[object Object]';
    default:
      // undefined (symbols and functions are never form, filter or record values)
      return '';
  }
}
