// The console API's channel calls, typed: a channel's or key's test, balances, the jobs that
// test or refresh every channel, the model list and a multi-key channel's keys. Each method's
// URL is in the map atop index.ts.
import { HttpError } from 'react-admin';
import type { Envelope } from '../../common/envelope';
import type { ChannelJob } from '../../common/listQuery';
import type { ChannelKeyRecord } from '../../common/records';
import { endpoints } from './endpoints';
import type { HttpClient } from './httpClient';

/** One channel test: a failed test also reports how long it took, and the server keeps that time. */
export interface ChannelTestResult {
  success: boolean;
  message: string;
  /** Seconds. */
  time: number;
  /** True when the upstream answered, but slower than the channel type's threshold. */
  slow?: boolean;
  /** The model asked for, as the channel's models name it. */
  model?: string;
  /** The answer's first words (at most 80 characters). */
  reply?: string;
  /** The key used, masked (never whole). */
  key?: string;
  /** On a multi-key channel, the key's place among its keys, from 1. */
  keyIndex?: number;
  /** Whether the system switches failing channels off (AutomaticDisableChannelEnabled); absent when the server does not say. */
  autoDisable?: boolean;
}

type TimedEnvelope = Envelope & {
  time?: number;
  balance?: number;
  slow?: boolean;
  model?: string;
  reply?: string;
  key?: string;
  key_index?: number;
  auto_disable?: boolean;
};

/** The details a test's answer may carry beside success, message and time. */
function testDetailsOf(envelope: TimedEnvelope): Partial<ChannelTestResult> {
  return {
    ...(envelope.slow ? { slow: true } : {}),
    ...(typeof envelope.model === 'string' && envelope.model ? { model: envelope.model } : {}),
    ...(typeof envelope.reply === 'string' && envelope.reply ? { reply: envelope.reply } : {}),
    ...(typeof envelope.key === 'string' && envelope.key ? { key: envelope.key } : {}),
    ...(typeof envelope.key_index === 'number' ? { keyIndex: envelope.key_index } : {}),
    ...(typeof envelope.auto_disable === 'boolean' ? { autoDisable: envelope.auto_disable } : {}),
  };
}

/** Channel tests, balances, jobs, models and keys over `httpClient`. */
export function channelCalls(httpClient: HttpClient) {
  /** A channel's or a key's test: a failed test also comes with its time, beside success and message. */
  const timedTest = async (url: string): Promise<ChannelTestResult> => {
    try {
      const envelope = (await httpClient(url)) as TimedEnvelope;
      return { success: true, message: envelope.message, time: Number(envelope.time ?? 0), ...testDetailsOf(envelope) };
    } catch (error) {
      const body = (error as HttpError).body as TimedEnvelope | undefined;
      if (body?.success === false && typeof body.time === 'number')
        return { success: false, message: body.message, time: body.time, ...testDetailsOf(body) };
      throw error;
    }
  };

  /** A job start answers the job, also when refused because one is already running (then that one is followed). */
  const startJob = async (url: string): Promise<ChannelJob> => {
    try {
      return (await httpClient<ChannelJob>(url)).data as ChannelJob;
    } catch (error) {
      const body = (error as HttpError).body as Envelope<ChannelJob> | undefined;
      if (body?.data?.id) return body.data;
      throw error;
    }
  };

  return {
    /** `model`: one of the channel's models; absent, the server tests its test model (or first). */
    testChannel: (id: string | number, model?: string) => timedTest(endpoints.channelTest(id, model)),
    channelKeys: async (id: string | number) => (await httpClient<ChannelKeyRecord[]>(endpoints.channelKeys(id))).data ?? [],
    addChannelKeys: async (id: string | number, keys: string) =>
      (await httpClient<{ added: number; skipped: number }>(endpoints.channelKeys(id), { method: 'POST', body: { keys } })).data ?? {
        added: 0,
        skipped: 0,
      },
    setChannelKeyStatus: async (id: string | number, keyId: number, status: number) =>
      (await httpClient<ChannelKeyRecord>(endpoints.channelKey(id, keyId), { method: 'PUT', body: { status } })).data as ChannelKeyRecord,
    deleteChannelKey: async (id: string | number, keyId: number) => {
      await httpClient(endpoints.channelKey(id, keyId), { method: 'DELETE' });
    },
    testChannelKey: (id: string | number, keyId: number) => timedTest(endpoints.channelKeyTest(id, keyId)),
    /** Starts testing every enabled channel; resolves to the job to follow with channelJob. */
    testAllChannels: () => startJob(endpoints.channelTest()),
    /** Asks the upstream for the channel's balance; resolves to it (unit per channel type). */
    updateChannelBalance: async (id: string | number) =>
      Number(((await httpClient(endpoints.channelBalance(id))) as TimedEnvelope).balance ?? 0),
    /** Starts refreshing every enabled channel's balance; resolves to the job. */
    updateAllChannelBalances: () => startJob(endpoints.channelBalance()),
    channelJob: async (id: string) => (await httpClient<ChannelJob>(endpoints.channelJob(id))).data as ChannelJob,
    channelModels: async () =>
      ((await httpClient<{ data?: Array<{ id: string }> }>(endpoints.channelModels)).data?.data ?? []).map((model) => model.id),
  };
}
