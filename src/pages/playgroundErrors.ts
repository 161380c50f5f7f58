// How the playground tells a failed call (PlaygroundPage.tsx): the title of a
// relay refusal by what the user can do about it, a hint in the console's
// language for the refusals it knows, and the failure a turn is marked with.
import { RelayError } from '../dataProvider/relayChat';
import { errorMessage } from '../dataProvider/errorMessage';

/** A failed call, as the conversation shows it at its turn. */
export interface Failure {
  title: string;
  /** A translated hint, when the refusal is one the console knows. */
  hint?: string;
  detail: string;
}

/** The title of a refusal, by what the user can do about it; the relay's own words go under it. */
export function relayErrorTitle(error: RelayError): string {
  if (error.status === 0) return 'playground.errors.network';
  if (error.status === 401) return 'playground.errors.key_refused';
  // a spent budget is a 429 too, but waiting a moment does not help: it lasts until the reset the detail gives
  if (error.code === 'budget_exceeded') return 'playground.errors.budget';
  if (error.status === 402 || error.code === 'insufficient_quota' || error.code === 'insufficient_user_quota')
    return 'playground.errors.no_quota';
  if (error.status === 429) return 'playground.errors.too_many';
  if (error.status === 403) return 'playground.errors.forbidden';
  if (error.status >= 500) return 'playground.errors.upstream';
  return 'playground.errors.refused';
}

/**
 * Seconds the relay asks a client to wait when a budget is spent only because requests in flight hold part of it
 * (server/billing/budgets.ts); any longer wait is the time until the budget resets.
 */
const BUDGET_HELD_RETRY_SECONDS = 2;

/**
 * What the user can do, in the console's language, for the refusals it knows; the relay's own words (English, with
 * the figures) are shown beneath it.
 */
export function relayErrorHint(
  error: RelayError,
  locale: string,
  now = Date.now(),
): { key: string; values?: Record<string, string> } | undefined {
  if (error.code === 'budget_exceeded') {
    if (error.retryAfter === undefined || error.retryAfter <= BUDGET_HELD_RETRY_SECONDS) return { key: 'playground.errors.budget_held' };
    return { key: 'playground.errors.budget_resets', values: { time: new Date(now + error.retryAfter * 1000).toLocaleString(locale) } };
  }
  if (error.status === 0) return { key: 'playground.errors.network_hint' };
  if (error.status === 401) return { key: 'playground.errors.key_refused_hint' };
  if (error.status === 402 || error.code === 'insufficient_quota' || error.code === 'insufficient_user_quota')
    return { key: 'playground.errors.no_quota_hint' };
  if (error.status === 429) return { key: 'playground.errors.too_many_hint' };
  return undefined;
}

/** The failure a turn is marked with: a relay refusal by its meaning with the relay's words, else the error's message. */
export function failureOf(error: unknown, translate: (key: string, values?: Record<string, string>) => string, locale: string): Failure {
  if (error instanceof RelayError) {
    const hint = relayErrorHint(error, locale);
    return { title: relayErrorTitle(error), ...(hint ? { hint: translate(hint.key, hint.values) } : {}), detail: error.message };
  }
  return { title: 'playground.errors.refused', detail: translate(errorMessage(error)) };
}
