// A log's text in the console's language. The server writes it in English
// (one-api clients read it as it is), always in one of a few fixed shapes: a
// consume row's "model ratio 1.50, group ratio 1.00[, detail]", a top-up, a
// gift, a two-factor change, a quota change, a returned hold, a request the
// client left. Each shape is read back into its numbers and names and said
// again through i18n (app.log.text.*); text of any other shape (an upstream's
// error message, rows imported from one-api) is shown as it was written.
// Quota amounts read as dollars where quota is shown in dollars, as
// quotaInText does for untranslated text.
import type { ClientStatus } from '../../../common/options';
import { dollarsInText, quotaInText, quotaUnit } from '../../quota';

type Translate = (key: string, options?: Record<string, unknown>) => string;
type UnitStatus = Pick<ClientStatus, 'display_in_currency' | 'quota_per_unit'> | null;

/**
 * One shape: the pattern of the English text, its i18n key, and which captures
 * hold quota amounts: `quota` ones are written "N quota", `bare` ones as a
 * number alone (an admin's change "from 100 to 2500"), kept so in quota units.
 */
interface Shape {
  pattern: RegExp;
  key: string;
  params: string[];
  quota?: string[];
  bare?: string[];
}

const SHAPES: Shape[] = [
  { pattern: /^top-up with a redemption code: (\d+) quota$/, key: 'topup', params: ['quota'], quota: ['quota'] },
  { pattern: /^new-user gift: (\d+) quota$/, key: 'new_user_gift', params: ['quota'], quota: ['quota'] },
  { pattern: /^gift for using an invite code: (\d+) quota$/, key: 'invitee_gift', params: ['quota'], quota: ['quota'] },
  { pattern: /^gift for inviting (.+): (\d+) quota$/, key: 'inviter_gift', params: ['username', 'quota'], quota: ['quota'] },
  { pattern: /^two-factor sign-in enabled$/, key: 'two_factor_enabled', params: [] },
  { pattern: /^two-factor sign-in disabled$/, key: 'two_factor_disabled', params: [] },
  { pattern: /^two-factor sign-in reset by (.+)$/, key: 'two_factor_reset', params: ['username'] },
  {
    pattern: /^(.+) changed the quota from (-?\d+) to (-?\d+)$/,
    key: 'quota_changed',
    params: ['username', 'from', 'to'],
    bare: ['from', 'to'],
  },
  {
    pattern: /^returned (\d+) quota held by requests that a restart cut off$/,
    key: 'hold_returned_restart',
    params: ['quota'],
    quota: ['quota'],
  },
  {
    pattern: /^returned (\d+) quota held by requests that node (.+) cut off$/,
    key: 'hold_returned_node',
    params: ['quota', 'nodes'],
    quota: ['quota'],
  },
  { pattern: /^the client left before the answer$/, key: 'client_gone', params: [] },
  { pattern: /^the answer billed nothing$/, key: 'nothing_billed', params: [] },
  // the relay's own refusals and upstream failures (server/relay/errors.ts and the admission checks)
  { pattern: /^the upstream service failed \(request id (\S+)\)$/, key: 'upstream_failed', params: ['request_id'] },
  { pattern: /^the upstream service refused the gateway \(request id (\S+)\)$/, key: 'upstream_refused', params: ['request_id'] },
  { pattern: /^the upstream service is busy, please retry later \(request id (\S+)\)$/, key: 'upstream_busy', params: ['request_id'] },
  { pattern: /^the upstream is busy, please retry later \(request id (\S+)\)$/, key: 'upstream_busy_short', params: ['request_id'] },
  { pattern: /^the upstream answer broke off \(request id (\S+)\)$/, key: 'upstream_broke_off', params: ['request_id'] },
  { pattern: /^the upstream service could not be reached \(request id (\S+)\)$/, key: 'upstream_unreachable', params: ['request_id'] },
  { pattern: /^the upstream timed out \(request id (\S+)\)$/, key: 'upstream_timeout', params: ['request_id'] },
  { pattern: /^the upstream answer stalled \(request id (\S+)\)$/, key: 'upstream_stalled', params: ['request_id'] },
  { pattern: /^no channel available for model (.+)$/, key: 'no_channel', params: ['model'] },
  { pattern: /^the quota of this API key is used up$/, key: 'quota_used_up', params: [] },
  { pattern: /^model (.+) has no price: an administrator must add it to ModelRatio$/, key: 'model_price_unset', params: ['model'] },
];

/** The details a consume row adds after its ratios: an image request's size and count, a speech request's characters. */
const DETAIL_SHAPES: Shape[] = [
  { pattern: /^size (\S+) \(ratio ([\d.]+)\), (\d+) images?$/, key: 'images', params: ['size', 'ratio', 'smart_count'] },
  { pattern: /^(\d+) input characters$/, key: 'characters', params: ['smart_count'] },
];

const RATIO_LINE = /^model ratio (-?[\d.]+), group ratio (-?[\d.]+)(?:, (.*))?$/s;

/** "$1.00 (500000 quota)" in dollars; "500000 quota" in quota units, or "500000" for a `bare` amount. */
function amount(quota: string, status: UnitStatus, translate: Translate, bare = false): string {
  const raw = translate('app.log.text.quota', { quota });
  const { inCurrency, perUnit } = quotaUnit(status);
  if (!inCurrency) return bare ? quota : raw;
  return `${dollarsInText(Number(quota), perUnit)} (${raw})`;
}

function said(shapes: Shape[], text: string, status: UnitStatus, translate: Translate): string | undefined {
  for (const shape of shapes) {
    const match = shape.pattern.exec(text);
    if (!match) continue;
    const params: Record<string, unknown> = {};
    shape.params.forEach((name, index) => {
      const value = match[index + 1];
      if (shape.quota?.includes(name)) params[name] = amount(value, status, translate);
      else if (shape.bare?.includes(name)) params[name] = amount(value, status, translate, true);
      else params[name] = name === 'smart_count' ? Number(value) : value;
    });
    return translate(`app.log.text.${shape.key}`, params);
  }
  return undefined;
}

/** The log's text in the console's language where its shape is known, else as written (quota amounts in the shown unit). */
export function logText(content: string, status: UnitStatus, translate: Translate): string {
  const ratios = RATIO_LINE.exec(content);
  if (ratios) {
    const line = translate('app.log.text.ratios', { model_ratio: ratios[1], group_ratio: ratios[2] });
    if (ratios[3] === undefined) return line;
    const detail = said(DETAIL_SHAPES, ratios[3], status, translate) ?? quotaInText(ratios[3], status);
    return translate('app.log.text.with_detail', { line, detail });
  }
  return said(SHAPES, content, status, translate) ?? quotaInText(content, status);
}
