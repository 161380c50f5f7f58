// The dashboard's view as it lives in the URL's query string, so a view can be
// shared and survives a reload: a range preset (or a custom start and end),
// a granularity, and the filters. Preset ranges are turned into start/end only
// when the request is made, so a reloaded "last 24 h" means the last 24 h now.
import type { DashboardGranularity, DashboardQuery } from '../../common/dashboard';

export const RANGE_PRESETS = ['24h', '7d', '30d', 'custom'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export const DEFAULT_RANGE: RangePreset = '7d';

const PRESET_SECONDS: Record<Exclude<RangePreset, 'custom'>, number> = {
  '24h': 24 * 3600,
  '7d': 7 * 24 * 3600,
  '30d': 30 * 24 * 3600,
};

export interface DashboardView {
  range: RangePreset;
  /** Unix seconds; only for the custom range. */
  start?: number;
  end?: number;
  /** Absent: the server's default for the range. */
  granularity?: DashboardGranularity;
  token_id?: number;
  model?: string;
  /** Admin filters. */
  user_id?: number;
  channel_id?: number;
}

const positiveInteger = (text: string | null): number | undefined => {
  if (text === null || !/^\d{1,15}$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 ? value : undefined;
};

export function viewFromSearch(search: URLSearchParams): DashboardView {
  const rangeText = search.get('range');
  const range: RangePreset = (RANGE_PRESETS as readonly string[]).includes(rangeText ?? '') ? (rangeText as RangePreset) : DEFAULT_RANGE;
  const granularityText = search.get('granularity');
  const view: DashboardView = {
    range,
    granularity: granularityText === 'hour' || granularityText === 'day' ? granularityText : undefined,
    token_id: positiveInteger(search.get('token_id')),
    model: search.get('model')?.trim() || undefined,
    user_id: positiveInteger(search.get('user_id')),
    channel_id: positiveInteger(search.get('channel_id')),
  };
  if (range === 'custom') {
    view.start = positiveInteger(search.get('start'));
    view.end = positiveInteger(search.get('end'));
  }
  return view;
}

/** The view as query parameters, defaults left out so shared links stay short. */
export function searchFromView(view: DashboardView): URLSearchParams {
  const search = new URLSearchParams();
  if (view.range !== DEFAULT_RANGE) search.set('range', view.range);
  if (view.range === 'custom') {
    if (view.start) search.set('start', String(view.start));
    if (view.end) search.set('end', String(view.end));
  }
  if (view.granularity) search.set('granularity', view.granularity);
  if (view.token_id) search.set('token_id', String(view.token_id));
  if (view.model) search.set('model', view.model);
  if (view.user_id) search.set('user_id', String(view.user_id));
  if (view.channel_id) search.set('channel_id', String(view.channel_id));
  return search;
}

/** The request for a view at `nowSeconds`; user and channel filters only for admins. */
export function queryOfView(view: DashboardView, admin: boolean, nowSeconds = Math.floor(Date.now() / 1000)): DashboardQuery {
  const query: DashboardQuery = {};
  if (view.range === 'custom') {
    query.start = view.start;
    query.end = view.end;
  } else {
    query.end = nowSeconds;
    query.start = nowSeconds - PRESET_SECONDS[view.range];
  }
  if (view.granularity) query.granularity = view.granularity;
  if (view.token_id) query.token_id = view.token_id;
  if (view.model) query.model = view.model;
  if (admin && view.user_id) query.user_id = view.user_id;
  if (admin && view.channel_id) query.channel_id = view.channel_id;
  return query;
}

/** The granularity the server uses when none is asked (common/dashboard.ts): day for ranges over two days. */
export function defaultGranularity(start: number, end: number): DashboardGranularity {
  return end - start > 2 * 24 * 3600 ? 'day' : 'hour';
}

/** A local calendar day (yyyy-mm-dd, as a date input gives it) to unix seconds at its start, or its end. */
export function dayToSeconds(day: string, edge: 'start' | 'end'): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return undefined;
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (edge === 'end') date.setHours(23, 59, 59, 0);
  return Math.floor(date.getTime() / 1000);
}

/** Unix seconds to the local calendar day a date input shows. */
export function secondsToDay(seconds: number | undefined): string {
  if (!seconds) return '';
  const date = new Date(seconds * 1000);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
