// Videos (OpenAI's Sora shape) as asynchronous tasks: what the gateway knows
// of a video (its summary in the task's row), the video object a client reads
// (the gateway's id, never the vendor's), the calls to the vendor that took
// it (the task's channel and key: a vendor knows a video under that key
// only), the poll of a Sora video, and the verdict rules every vendor's video
// is billed by (videoVendors.ts picks the vendor's way by the channel's type).
// Reference: https://platform.openai.com/docs/api-reference/videos
import type { Kysely } from 'kysely';
import { findChannelType } from '../../../common/channelTypes';
import { LogType } from '../../../common/roles';
import type { Database } from '../../db/database';
import { videoQuotaFormula } from '../../billing/videoPrices';
import type { NewLog } from '../../repositories/logs';
import { findChannel } from '../../repositories/channels';
import { findChannelKey } from '../../repositories/channelKeys';
import type { TaskRow } from '../../repositories/tasks';
import type { ChannelConfig } from '../../protocols/types';
import { baseUrlOf, openAiAuthHeader } from '../../protocols/upstream/openai';
import type { TaskVerdict } from './poller';

/** What a video task's row keeps of its request (tasks.request, as JSON). */
export interface VideoSummary {
  seconds: number;
  size: string;
  /** The price it was held at: USD per second and the group's ratio. */
  perSecond: number;
  groupRatio: number;
  /** For its consume log. */
  username: string;
  tokenName: string;
}

export function videoSummaryOf(task: Pick<TaskRow, 'request'>): VideoSummary {
  return JSON.parse(task.request) as VideoSummary;
}

/** The status a client reads: a task not yet handed over is queued; a deleted one is never shown. */
const clientStatus = (status: string) => (status === 'submitting' ? 'queued' : status);

/** The video object, as OpenAI writes it, under the gateway's id. */
export function videoObject(task: TaskRow) {
  const summary = videoSummaryOf(task);
  return {
    id: task.id,
    object: 'video',
    model: task.model,
    status: clientStatus(task.status),
    progress: Number(task.progress),
    created_at: Number(task.created_at),
    completed_at: task.completed_at === null ? null : Number(task.completed_at),
    expires_at: task.expires_at === null ? null : Number(task.expires_at),
    seconds: String(summary.seconds),
    size: summary.size,
    remixed_from_video_id: null,
    error: task.error ? (JSON.parse(task.error) as { code: string; message: string }) : null,
  };
}

/** The channel that took the task, with the key it was taken with; undefined when the channel (or key) is gone. */
export async function taskChannelOf(db: Kysely<Database>, task: TaskRow): Promise<ChannelConfig | undefined> {
  const channel = await findChannel(db, Number(task.channel_id));
  if (!channel) return undefined;
  let key = channel.key;
  if (task.key_id !== null) {
    const row = await findChannelKey(db, Number(task.channel_id), Number(task.key_id));
    if (!row) return undefined;
    key = row.key;
  }
  return { type: Number(channel.type), key, baseUrl: channel.base_url ?? '', other: channel.other ?? '' };
}

/** Where the task's vendor is, and the key it was taken with; undefined when the channel (or key) is gone. */
async function vendorOf(db: Kysely<Database>, task: TaskRow): Promise<{ base: string; headers: Record<string, string> } | undefined> {
  const config = await taskChannelOf(db, task);
  return config && { base: baseUrlOf(config), headers: openAiAuthHeader(findChannelType(config.type), config.key) };
}

/** Calls the vendor about a task's video: `suffix` after /v1/videos/{upstream id} (`''`, `/content?...`). */
export async function callVendor(
  db: Kysely<Database>,
  task: TaskRow,
  method: 'GET' | 'DELETE',
  suffix: string,
  headers: Record<string, string> = {},
): Promise<Response | undefined> {
  const vendor = await vendorOf(db, task);
  if (!vendor || !task.upstream_id) return undefined;
  const url = `${vendor.base}/v1/videos/${encodeURIComponent(task.upstream_id)}${suffix}`;
  return fetch(url, { method, headers: { ...headers, ...vendor.headers }, signal: AbortSignal.timeout(30_000) });
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** The consume log of a finished video: one row, naming its task. */
export function videoConsumeLog(task: TaskRow, charge: number, seconds: number): NewLog {
  const summary = videoSummaryOf(task);
  const now = Date.now();
  const price = { perSecond: summary.perSecond, groupRatio: summary.groupRatio };
  return {
    userId: Number(task.user_id),
    username: summary.username,
    type: LogType.consume,
    content: `video ${seconds} s at ${summary.size}, $${summary.perSecond} per second, group ratio ${summary.groupRatio}`,
    quota: charge,
    tokenName: summary.tokenName,
    tokenId: Number(task.token_id),
    modelName: task.model,
    channelId: Number(task.channel_id),
    elapsedMs: now - Number(task.created_at) * 1000,
    createdAt: Math.floor(now / 1000),
    requestId: task.request_id,
    details: {
      protocol: 'openai',
      operation: 'videos',
      status: 200,
      groupRatio: summary.groupRatio,
      formula: videoQuotaFormula(price, seconds, charge),
      taskId: task.id,
    },
  };
}

/** What the vendor's video object says of the task. */
export function verdictOf(task: TaskRow, video: Record<string, unknown>): TaskVerdict {
  const summary = videoSummaryOf(task);
  const progress = Math.min(100, Math.round(count(video.progress) ?? Number(task.progress)));
  if (video.status === 'queued' || video.status === 'in_progress') return { state: 'running', status: video.status, progress };
  if (video.status === 'completed') {
    // billed by the seconds asked for, or fewer when the vendor says it made fewer
    const made = Number(video.seconds);
    const seconds = Number.isFinite(made) && made > 0 ? Math.min(made, summary.seconds) : summary.seconds;
    const charge = Math.round(Number(task.held_quota) * (seconds / summary.seconds));
    return {
      state: 'done',
      status: 'completed',
      charge,
      log: videoConsumeLog(task, charge, seconds),
      progress: 100,
      completedAt: count(video.completed_at),
      expiresAt: count(video.expires_at),
    };
  }
  if (video.status === 'failed') {
    const error = video.error as { code?: unknown; message?: unknown } | null | undefined;
    const code = typeof error?.code === 'string' ? error.code : 'video_failed';
    const message = typeof error?.message === 'string' ? error.message : 'the vendor could not make the video';
    return { state: 'done', status: 'failed', charge: 0, error: { code, message } };
  }
  return { state: 'unanswered' };
}

/** The poll of a Sora video: the vendor's GET /v1/videos/{id}. A video it no longer knows failed; no answer waits. */
export async function pollOpenAiVideo(db: Kysely<Database>, task: TaskRow): Promise<TaskVerdict> {
  const response = await callVendor(db, task, 'GET', '', { accept: 'application/json' }).catch(() => undefined);
  if (!response) return { state: 'unanswered' };
  if (response.status === 404) return videoGone;
  if (!response.ok) return { state: 'unanswered' };
  const video = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  return video && typeof video === 'object' ? verdictOf(task, video) : { state: 'unanswered' };
}

/** The verdict on a video its vendor no longer knows. */
export const videoGone: TaskVerdict = {
  state: 'done',
  status: 'failed',
  charge: 0,
  error: { code: 'video_not_found', message: 'the vendor no longer knows this video' },
};
