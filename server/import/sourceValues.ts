// Reading a source column as its driver returns it (text, number, bigint,
// boolean, Buffer, Date, or nothing): leniently, with a fallback, since
// one-api and new-api left many columns nullable over their versions.

/** A source row, its column names in lower case. */
export type Row = Record<string, unknown>;

/** A number, or the fallback when the column is empty or not a number. */
export const num = (value: unknown, fallback = 0): number => {
  if (value === null || value === undefined || value === '') return fallback;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : fallback;
};
/** Text, empty for a null. */
// eslint-disable-next-line @typescript-eslint/no-base-to-string -- a source column as its driver returns it (text, number, bigint, Buffer, Date): String() turns each into its text
export const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
/** A key or code: PostgreSQL pads char(n) columns with blanks when it reads them. */
export const keyText = (value: unknown): string => text(value).trimEnd();
/** A boolean column as 1 or 0. */
export const flag = (value: unknown): number => (value === true || num(value) === 1 ? 1 : 0);
/** Soft-deleted (GORM's deleted_at) in the source. */
export const isDeleted = (row: Row) => row.deleted_at !== null && row.deleted_at !== undefined;
