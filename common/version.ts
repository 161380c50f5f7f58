/** The version string the console and `/api/status` report; kept v0.5.3-compatible for one-api clients. */
export const VERSION = 'v0.5.3';

/** Rows per page on every `?p=` list endpoint (one-api's ItemsPerPage). */
export const ITEMS_PER_PAGE = 10;

/** The latest release as the update check reports it (`GET /api/release/latest` data). */
export interface ReleaseInfo {
  /** This build's version (VERSION). */
  current_version: string;
  tag_name: string;
  name: string;
  /** Release notes, Markdown. */
  body: string;
  /** The release page; empty unless an http(s) URL. */
  html_url: string;
  /** ISO 8601, as the release server sent it. */
  published_at: string;
  /** Whether tag_name is a later version than current_version. */
  update_available: boolean;
}
