// The channels' background jobs: test-all (every enabled channel tested; a
// dead key or a test slower than its type's threshold disables it),
// balance-all (every balance refreshed; an empty one disables its channel),
// and the health pass that brings back channels the system disabled, on a
// timer. Nothing here disables or re-enables a channel except through
// autoDisable.ts, so the AutomaticDisableChannelEnabled toggle and the
// auto_disabled flag are honoured everywhere, and a channel an admin disabled
// is never re-enabled. The checks themselves are channelTest.ts and
// channelBalance.ts; how a job runs (one worker at a time, its progress) is
// channelJobs.ts. Each job is handed its dependencies, built where the app is
// (plugins/backgroundJobs.ts).
import { BALANCE_CHANNEL_TYPES } from '../../common/channelTypes';
import { ChannelStatus } from '../../common/roles';
import { findChannel, listChannelsToCheck } from '../repositories/channels';
import { listAutoDisabledKeys } from '../repositories/channelKeys';
import {
  disableChannelAutomatically,
  disableChannelKeyAutomatically,
  notifyRoot,
  reenableChannelAutomatically,
  reenableChannelKeyAutomatically,
  type ChannelStatusDeps,
} from './autoDisable';
import { updateChannelBalance } from './channelBalance';
import { JobElsewhere, runJob, startJob, stopChannelJobs, type JobDeps, type JobProgress, type StartedJob } from './channelJobs';
import { slowMessage, testChannel, type ChannelTestDeps, type ChannelTestResult } from './channelTest';

/** What the jobs need: the checks' database and options, the job leases, the mailer (root's notices) and a log. */
export type ChannelJobDeps = ChannelTestDeps & JobDeps & ChannelStatusDeps;

function disableReason(result: ChannelTestResult): string | undefined {
  if (!result.sent) return undefined;
  if (result.failure?.deadKey) return result.message;
  if (result.slow) return slowMessage(result.seconds, result.thresholdSeconds);
  return undefined;
}

async function testEnabledChannels(
  deps: ChannelJobDeps,
  signal: AbortSignal,
  progress: JobProgress,
  notifyWhenDone: boolean,
): Promise<void> {
  const channels = await listChannelsToCheck(deps.db, { status: ChannelStatus.enabled });
  progress.begin(channels.length);
  const disabled: number[] = [];
  for (const channel of channels) {
    if (signal.aborted) return;
    const result = await testChannel(deps, channel, signal);
    if (signal.aborted) return;
    progress.visited(channel, result.success ? undefined : result.message || 'test failed');
    const reason = disableReason(result);
    if (reason && result.keyId !== undefined && result.failure?.deadKey) {
      // a dead key of many is set aside alone (the channel goes only with its last key)
      await disableChannelKeyAutomatically(deps, Number(channel.id), result.keyId, reason);
    } else if (reason && (await disableChannelAutomatically(deps, Number(channel.id), reason))) {
      disabled.push(Number(channel.id));
    }
  }
  if (!notifyWhenDone) return;
  // each disabled channel already had its own e-mail with name and reason
  const summary = disabled.length ? `Disabled: ${disabled.map((id) => `#${id}`).join(', ')}.` : 'No channel was disabled.';
  await notifyRoot(deps, 'channel test finished', `<p>${channels.length} enabled channel(s) tested. ${summary}</p>`).catch(
    (error: unknown) => deps.log.warn({ err: error }, 'could not e-mail root that the channel test finished'),
  );
}

/**
 * Tests every enabled channel in the background. A dead key or a test slower
 * than its type's threshold (channelTestThresholdSeconds) disables the channel,
 * when AutomaticDisableChannelEnabled allows it. When a test-all is
 * already running in this process, `started` is false and `job` is that
 * run; undefined only while the app is closing.
 */
export function startTestingAllChannels(deps: ChannelJobDeps, options: { notifyWhenDone: boolean }): Promise<StartedJob | undefined> {
  return startJob(deps, 'test-all', (signal, progress) => testEnabledChannels(deps, signal, progress, options.notifyWhenDone));
}

/**
 * Refreshes the balance of every enabled channel whose type has a balance
 * endpoint, in the background. An empty balance disables the channel when
 * AutomaticDisableChannelEnabled allows it. When one is already running,
 * `started` is false and `job` is that run.
 */
export function startUpdatingAllBalances(deps: ChannelJobDeps): Promise<StartedJob | undefined> {
  return startJob(deps, 'balance-all', async (signal, progress) => {
    const channels = await listChannelsToCheck(deps.db, { status: ChannelStatus.enabled, types: BALANCE_CHANNEL_TYPES });
    progress.begin(channels.length);
    for (const channel of channels) {
      if (signal.aborted) return;
      const result = await updateChannelBalance(deps.db, channel, signal);
      if (signal.aborted) return;
      progress.visited(channel, 'error' in result ? result.error : undefined);
      if ('error' in result) deps.log.info({ channelId: Number(channel.id), error: result.error }, 'balance query failed');
      else if (result.balance <= 0) await disableChannelAutomatically(deps, Number(channel.id), 'insufficient balance');
    }
  });
}

export interface HealthPassResult {
  /** Ids of the system-disabled channels that were tested. */
  tested: number[];
  /** Ids of those that passed within the threshold and are enabled again. */
  reenabled: number[];
  /** Ids of the keys of multi-key channels the system had set aside, tested. */
  keysTested: number[];
  /** Ids of those keys that passed and are live again. */
  keysReenabled: number[];
}

/** The health pass's first half: each channel the system disabled, tested, and enabled again when it passes. */
async function retestDisabledChannels(deps: ChannelJobDeps, signal: AbortSignal, result: HealthPassResult): Promise<void> {
  const channels = await listChannelsToCheck(deps.db, { status: ChannelStatus.disabled, autoDisabled: true });
  for (const channel of channels) {
    if (signal.aborted) break;
    // a multi-key channel is tested with its first live key; one with none left comes back with its first key that passes, below
    const test = await testChannel(deps, channel, signal);
    if (!test.sent || signal.aborted) continue;
    result.tested.push(Number(channel.id));
    // a slow answer is already a failed test
    if (test.success && (await reenableChannelAutomatically(deps, Number(channel.id)))) result.reenabled.push(Number(channel.id));
  }
}

/** The health pass's second half: the keys the system set aside, each tested on its own; a key that passes brings its channel back with it. */
async function retestDisabledKeys(deps: ChannelJobDeps, signal: AbortSignal, result: HealthPassResult): Promise<void> {
  for (const key of await listAutoDisabledKeys(deps.db)) {
    if (signal.aborted) break;
    const channel = await findChannel(deps.db, Number(key.channel_id));
    if (!channel) continue;
    const test = await testChannel(deps, channel, signal, undefined, key);
    if (!test.sent || signal.aborted) continue;
    result.keysTested.push(Number(key.id));
    const healthy = test.success; // a slow answer is already a failed test
    if (!healthy || !(await reenableChannelKeyAutomatically(deps, Number(channel.id), Number(key.id)))) continue;
    result.keysReenabled.push(Number(key.id));
    if (Number(channel.status) === ChannelStatus.disabled && !result.reenabled.includes(Number(channel.id)))
      result.reenabled.push(Number(channel.id));
  }
}

/**
 * Re-tests the channels the system disabled (never those an admin disabled)
 * and re-enables each that passes within its type's threshold; likewise the
 * keys it set aside on multi-key channels. Resolves to
 * undefined when a pass is already running (here or on another worker).
 * `periodMs`: a tick of the timer, whose lease is kept until the next tick.
 */
export async function runHealthPass(deps: ChannelJobDeps, periodMs?: number): Promise<HealthPassResult | undefined> {
  const pass = runJob(
    deps,
    'health',
    async (signal) => {
      const result: HealthPassResult = { tested: [], reenabled: [], keysTested: [], keysReenabled: [] };
      await retestDisabledChannels(deps, signal, result);
      await retestDisabledKeys(deps, signal, result);
      return result;
    },
    { periodMs },
  );
  return pass?.catch((error: unknown) => {
    if (error instanceof JobElsewhere) return undefined;
    throw error;
  });
}

/**
 * The health pass every `intervalSeconds` (0 = never): `start` once the app is
 * ready; `stop` on close ends the timer and every running channel job, before
 * the database goes away.
 */
export function channelHealthChecks(deps: ChannelJobDeps, intervalSeconds: number): { start(): void; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (intervalSeconds <= 0) return;
      timer = setInterval(() => {
        runHealthPass(deps, intervalSeconds * 1000).catch((error: unknown) => deps.log.error({ err: error }, 'channel health pass failed'));
      }, intervalSeconds * 1000);
      timer.unref(); // never keeps the process alive on its own
    },
    async stop() {
      clearInterval(timer);
      await stopChannelJobs(deps);
    },
  };
}
