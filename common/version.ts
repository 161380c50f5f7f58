/** The version string the console and `/api/status` report; kept v0.5.3-compatible for one-api clients. */
export const VERSION = 'v0.5.3';

/** Rows per page on every `?p=` list endpoint (one-api's ItemsPerPage). */
export const ITEMS_PER_PAGE = 10;
