// A channel's balance, asked of its vendor and saved on the channel. Each
// type's row in common/channelTypes.ts names the kind of endpoint and its
// unit; this file holds one fetcher per kind (OpenAI's billing dashboard and
// the resellers' variants of it, and today's vendors' own), and a vendor whose
// adaptor describes its own endpoint is asked through that. The channel's base
// URL wins over the documented host, so a self-hosted mirror (or a test
// emulator) is queried where it lives. Nothing here disables a channel: the
// balance-all job (channelHealth.ts) decides that from the figure.
import type { Kysely } from 'kysely';
import { findChannelType, type BalanceSourceKind, type BalanceUnit, type ChannelBalance } from '../../common/channelTypes';
import type { Database } from '../db/database';
import { isUpstreamFailure } from '../protocols/types';
import { adaptorForChannelType } from '../protocols/upstream';
import { openAiFailure } from '../protocols/upstream/openai';
import { recordChannelBalance, type ChannelRow } from '../repositories/channels';
import { liveChannelKeys } from '../repositories/channelKeys';
import { scrubSecrets } from '../relay/scrub';
import { secretsOf } from '../relay/attempt';
import { callUpstream, configOf, describeFailure, isSuccessStatus, parseJson } from './checkCall';

/** The channel's base URL, else the endpoint's documented host, else its type's default; no trailing slash. */
function baseUrlOf(channel: ChannelRow, fallback?: string): string {
  return (channel.base_url || fallback || findChannelType(Number(channel.type))?.defaultBaseUrl || '').replace(/\/+$/, '');
}

async function getJson(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const answer = await callUpstream(url, { method: 'GET', headers }, signal);
  if (!isSuccessStatus(answer.status)) throw new Error(describeFailure(openAiFailure(answer.status, answer.text)));
  const body = parseJson(answer.text);
  if (!body || typeof body !== 'object') throw new Error('upstream answered with a body that is not JSON');
  return body as Record<string, unknown>;
}

/** A number, or a numeric string (OpenAI-SB, DeepSeek and SiliconFlow send amounts as text). */
function numberFrom(value: unknown, field: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new Error(`upstream answer has no ${field}`);
  return number;
}

/** `body.data` as an object, or the vendor's own words for why there is none. */
function dataOf(body: Record<string, unknown>): Record<string, unknown> {
  const data = body.data;
  if (data && typeof data === 'object') return data as Record<string, unknown>;
  const said = [body.msg, body.message].find((text) => typeof text === 'string' && text);
  throw new Error(typeof said === 'string' ? said : 'upstream answer has no data');
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** YYYY-MM-DD in the server's local time, as OpenAI's dashboard expects. */
function localDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Reads one kind of balance endpoint at `base`: the figure in `setting.unit`. */
type BalanceFetch<Kind extends BalanceSourceKind> = (
  base: string,
  key: string,
  setting: ChannelBalance & { source: Kind },
  signal?: AbortSignal,
) => Promise<number>;

const UNIT_NAMES: Record<BalanceUnit, string> = { usd: 'USD', cny: 'CNY', cny_per_10000: 'CNY/10000', points: 'points' };

/**
 * One fetcher per kind of balance endpoint (the kinds are common/channelTypes.ts's,
 * where each type's row names its own). https://platform.openai.com/account/billing
 * and the resellers' copies of it answer in the same shape.
 */
const BALANCE_FETCHERS: { [Kind in BalanceSourceKind]: BalanceFetch<Kind> } = {
  /** hard_limit_usd minus this period's usage (which OpenAI reports in cents). */
  'openai-subscription': async (base, key, _setting, signal) => {
    const subscription = await getJson(`${base}/v1/dashboard/billing/subscription`, bearer(key), signal);
    const hardLimit = numberFrom(subscription.hard_limit_usd, 'hard_limit_usd');
    const today = new Date();
    // without a payment method the grant is not monthly: look back 100 days
    const start =
      subscription.has_payment_method === true
        ? new Date(today.getFullYear(), today.getMonth(), 1)
        : new Date(today.getFullYear(), today.getMonth(), today.getDate() - 100);
    const query = new URLSearchParams({ start_date: localDate(start), end_date: localDate(today) });
    const usage = await getJson(`${base}/v1/dashboard/billing/usage?${query.toString()}`, bearer(key), signal);
    return hardLimit - numberFrom(usage.total_usage, 'total_usage') / 100;
  },
  'credit-grants': async (base, key, { field }, signal) =>
    numberFrom((await getJson(`${base}/dashboard/billing/credit_grants`, bearer(key), signal))[field], field),
  'openai-sb': async (base, key, _setting, signal) => {
    const body = await getJson(`${base}/sb-api/user/status?${new URLSearchParams({ api_key: key }).toString()}`, bearer(key), signal);
    return numberFrom(dataOf(body).credit, 'credit');
  },
  aiproxy: async (base, key, _setting, signal) => {
    const body = await getJson(`${base}/api/report/getUserOverview`, { 'api-key': key }, signal);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- AI Proxy's error_code and message, parsed JSON of no fixed type, quoted as String() renders them
    if (body.success !== true) throw new Error(`code: ${String(body.error_code ?? '')}, message: ${String(body.message ?? '')}`);
    return numberFrom((body.data as { totalPoints?: unknown } | undefined)?.totalPoints, 'totalPoints');
  },
  /**
   * https://api-docs.deepseek.com/api/get-user-balance: `balance_infos`, one
   * entry per currency (CNY or USD), amounts as strings. The entry in the
   * row's unit is the balance; money held in another currency cannot be
   * stored in that unit, so the answer is refused instead.
   */
  deepseek: async (base, key, { unit }, signal) => {
    const infos = (await getJson(`${base}/user/balance`, bearer(key), signal)).balance_infos;
    if (!Array.isArray(infos) || infos.length === 0) throw new Error('upstream answer has no balance_infos');
    const wanted = UNIT_NAMES[unit];
    let balance = 0;
    const elsewhere: string[] = [];
    for (const info of infos as Array<{ currency?: unknown; total_balance?: unknown } | null>) {
      const amount = numberFrom(info?.total_balance, 'total_balance');
      if (info?.currency === wanted) balance += amount;
      else if (amount !== 0) elsewhere.push(`${String(info?.total_balance)} ${String(info?.currency)}`);
    }
    if (elsewhere.length > 0)
      throw new Error(
        `this account's balance is held in another currency (${elsewhere.join(', ')}); this channel type records balances in ${wanted}`,
      );
    return balance;
  },
  /** https://platform.moonshot.cn/docs/api/balance: cash plus vouchers. */
  moonshot: async (base, key, _setting, signal) =>
    numberFrom(dataOf(await getJson(`${base}/v1/users/me/balance`, bearer(key), signal)).available_balance, 'available_balance'),
  /** https://openrouter.ai/docs/api/api-reference/credits/get-credits: credits bought minus credits used. */
  openrouter: async (base, key, _setting, signal) => {
    const data = dataOf(await getJson(`${base}/api/v1/credits`, bearer(key), signal));
    return numberFrom(data.total_credits, 'total_credits') - numberFrom(data.total_usage, 'total_usage');
  },
  /** https://docs.siliconflow.cn/en/api-reference/userinfo/get-user-info: granted plus charged balance, as text. */
  siliconflow: async (base, key, _setting, signal) =>
    numberFrom(dataOf(await getJson(`${base}/v1/user/info`, bearer(key), signal)).totalBalance, 'totalBalance'),
  /**
   * https://novita.ai/docs/api-reference/basic-get-user-balance: what the account can spend (its top-up plus its
   * credit limit), as text in ten-thousandths of a US dollar.
   */
  novita: async (base, key, _setting, signal) =>
    numberFrom((await getJson(`${base}/openapi/v1/billing/balance/detail`, bearer(key), signal)).availableBalance, 'availableBalance') /
    10_000,
  /** https://platform.stepfun.com/docs/zh/api-reference/accounts/get: the available balance (top-ups and vouchers). */
  stepfun: async (base, key, _setting, signal) =>
    numberFrom((await getJson(`${base}/v1/accounts`, bearer(key), signal)).balance, 'balance'),
};

/** The kinds of balance endpoint this file can read (a test holds them to the table's). */
export const BALANCE_SOURCE_KINDS: readonly BalanceSourceKind[] = Object.keys(BALANCE_FETCHERS) as BalanceSourceKind[];

/** Reads a balance as its type's row describes it. */
function fetchBalance(setting: ChannelBalance, base: string, key: string, signal?: AbortSignal): Promise<number> {
  const read = BALANCE_FETCHERS[setting.source] as BalanceFetch<BalanceSourceKind>;
  return read(base, key, setting, signal);
}

/** The unit a vendor's other platform answers in, when the channel points there and it differs from the row's. */
function otherCurrencyOf(setting: ChannelBalance, base: string): BalanceUnit | undefined {
  let host: string;
  try {
    host = new URL(base).host.toLowerCase();
  } catch {
    return undefined;
  }
  const unit = setting.otherCurrencyHosts?.[host];
  return unit && unit !== setting.unit ? unit : undefined;
}

/** Asks the upstream for the channel's balance and saves it. Never disables anything. */
export async function updateChannelBalance(
  db: Kysely<Database>,
  channel: ChannelRow,
  signal?: AbortSignal,
): Promise<{ balance: number } | { error: string }> {
  const type = findChannelType(Number(channel.type));
  const setting = type?.balance;
  const adaptorSource = adaptorForChannelType(Number(channel.type))?.balance;
  if (!setting && !adaptorSource) return { error: 'balance query is not supported for this channel type' };
  if (Number(channel.multi_key) === 1) {
    // a multi-key channel's balance is its first live key's (keys of one account share it)
    const first = (await liveChannelKeys(db, Number(channel.id)))[0];
    if (!first) return { error: 'this channel has no live key' };
    channel = { ...channel, key: first.key };
  }
  let balance: number;
  try {
    if (setting) {
      const base = baseUrlOf(channel, setting.host);
      if (!base) return { error: 'this channel has no base URL' };
      const otherUnit = otherCurrencyOf(setting, base);
      if (otherUnit) {
        return {
          error: `${new URL(base).host} reports balances in ${UNIT_NAMES[otherUnit]}; ${type.label} balances are recorded in ${UNIT_NAMES[setting.unit]}`,
        };
      }
      balance = await fetchBalance(setting, base, channel.key, signal);
    } else {
      // the vendor's own balance endpoint, as its adaptor describes it
      const target = adaptorSource!.request(configOf(channel));
      const answer = await callUpstream(target.url, { method: target.method, headers: target.headers }, signal);
      const parsed = adaptorSource!.parse(answer.status, answer.text);
      if (isUpstreamFailure(parsed)) throw new Error(describeFailure(parsed));
      balance = parsed;
    }
  } catch (error) {
    return { error: scrubSecrets((error as Error).message, secretsOf(channel.key)) };
  }
  if (!signal?.aborted) await recordChannelBalance(db, Number(channel.id), balance);
  return { balance };
}
