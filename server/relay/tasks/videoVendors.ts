// The vendor switch of video tasks, chosen from the type of the channel that
// took the task: OpenAI's Videos API (videos.ts: the video's own URLs), or a
// vendor with a video adaptor (protocols/upstream/videoAdaptors.ts: Veo
// through the Gemini API or Vertex AI), whose I/O is here. A Veo operation is
// polled into the video object OpenAI would write, so one set of verdict rules
// (videos.ts verdictOf) bills and refunds every vendor's video alike. Its
// bytes: the Gemini API's file, downloaded with the key (the operation asked
// again for its URL, so nothing but the operation's name is kept); Vertex AI's
// bytes, handed over once in the poll's answer and kept in the file store.
// Neither Google API deletes an operation: deleting such a video only forgets
// it here (and frees a kept copy), refunding it when unfinished.
import type { Kysely } from 'kysely';
import { findChannelType } from '../../../common/channelTypes';
import type { Database } from '../../db/database';
import { isUpstreamFailure, type ChannelConfig, type UpstreamAdaptor, type UpstreamFailure } from '../../protocols/types';
import { adaptorForChannelType } from '../../protocols/upstream';
import { videoAdaptorFor, type VideoAdaptor, type VideoRequest } from '../../protocols/upstream/videoAdaptors';
import type { FileStore } from '../../services/fileStore';
import type { TaskRow } from '../../repositories/tasks';
import { credentialFor, forgetCredential } from '../credentials';
import type { TaskKind, TaskVerdict } from './poller';
import { forgetVideo, keepVideo, keptContent, vendorContent, type VideoContent } from './videoContent';
import { pollOpenAiVideo, taskChannelOf, verdictOf, videoGone } from './videos';

/** How long the Gemini API keeps a generated video's file. */
const GEMINI_FILE_SECONDS = 2 * 86_400;
const POLL_TIMEOUT_MS = 30_000;
/** A download streams the whole video: long enough for a slow client to read it. */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const UNANSWERED: TaskVerdict = { state: 'unanswered' };

/** A task's channel whose vendor has a video adaptor. */
export interface AdaptedVendor {
  config: ChannelConfig;
  adaptor: UpstreamAdaptor;
  video: VideoAdaptor;
}

/** The task's channel when its vendor has a video adaptor; undefined for OpenAI's Videos API (or a channel gone). */
export async function adaptedVendorOf(db: Kysely<Database>, task: TaskRow): Promise<AdaptedVendor | undefined> {
  const config = await taskChannelOf(db, task);
  const video = config && videoAdaptorFor(findChannelType(config.type)?.protocol);
  const adaptor = config && adaptorForChannelType(config.type);
  return config && video && adaptor ? { config, adaptor, video } : undefined;
}

/** Sends what `build` makes with the channel's credential (if it has one); a refused token is dropped for the next call. */
async function ask(
  vendor: AdaptedVendor,
  build: (credential: string | undefined) => VideoRequest | UpstreamFailure,
  headers: Record<string, string> = {},
  timeoutMs = POLL_TIMEOUT_MS,
): Promise<Response | undefined> {
  let credential = credentialFor(vendor.adaptor, vendor.config);
  if (credential instanceof Promise) credential = await credential;
  if (isUpstreamFailure(credential)) return undefined;
  const request = build(credential);
  if (isUpstreamFailure(request)) return undefined;
  const { url, method, body } = request;
  const answer = await fetch(url, { method, headers: { ...request.headers, ...headers }, body, signal: AbortSignal.timeout(timeoutMs) });
  if (answer.status === 401 && credential) forgetCredential(vendor.adaptor, vendor.config, credential);
  return answer;
}

/** What the vendor's operation says now, read by its adaptor; undefined when nothing usable came. */
async function operationOf(vendor: AdaptedVendor, task: TaskRow) {
  const answer = await ask(vendor, (credential) => vendor.video.poll(vendor.config, task.upstream_id ?? '', credential));
  if (!answer) return undefined;
  if (answer.status === 404) return 'gone' as const;
  const text = await answer.text();
  return answer.ok ? vendor.video.readPoll(text) : undefined;
}

/** The poll of an adapted vendor's video, as a verdict by OpenAI's rules; a finished Vertex AI video's bytes kept first. */
async function pollAdapted(store: FileStore, task: TaskRow, vendor: AdaptedVendor): Promise<TaskVerdict> {
  const state = await operationOf(vendor, task);
  if (state === 'gone') return videoGone;
  if (!state || state.state === 'unreadable') return UNANSWERED;
  if (state.state === 'running') return verdictOf(task, { status: 'in_progress' });
  if (state.state === 'failed') return verdictOf(task, { status: 'failed', error: { code: state.code, message: state.message } });
  const { output } = state;
  if (output.kind === 'gcs') {
    const message = 'Vertex AI wrote the video to Cloud Storage, which the gateway does not read; it is not billed';
    return verdictOf(task, { status: 'failed', error: { code: 'video_in_cloud_storage', message } });
  }
  const now = Math.floor(Date.now() / 1000);
  if (output.kind === 'bytes') await keepVideo(store, task.id, output.bytes, output.mimeType);
  const expiresAt = output.kind === 'uri' ? now + GEMINI_FILE_SECONDS : undefined;
  return verdictOf(task, { status: 'completed', completed_at: now, expires_at: expiresAt });
}

/** The poll of every video task: its vendor's, by the type of the channel that took it. */
export function videoTaskKind(db: Kysely<Database>, store: FileStore): TaskKind {
  return {
    kind: 'video',
    async poll(task) {
      const vendor = await adaptedVendorOf(db, task);
      return vendor ? pollAdapted(store, task, vendor) : pollOpenAiVideo(db, task);
    },
  };
}

/** An adapted vendor's finished video: the Gemini API's file (its URL asked of the operation again), or the kept copy. */
export async function adaptedContent(store: FileStore, task: TaskRow, vendor: AdaptedVendor, range?: string): Promise<VideoContent> {
  const { video, config } = vendor;
  if (!video.download) return keptContent(store, task.id, range);
  const state = await operationOf(vendor, task).catch(() => undefined);
  if (state === undefined || state === 'gone' || state.state !== 'completed' || state.output.kind !== 'uri')
    return { ok: false, status: 502, message: 'the vendor no longer names the video' };
  const { uri } = state.output;
  const answer = await ask(vendor, () => video.download!(config, uri), range ? { range } : {}, DOWNLOAD_TIMEOUT_MS).catch(() => undefined);
  return vendorContent(answer);
}

/** An adapted vendor's video is deleted here only (neither Google API deletes an operation): its kept copy is freed. */
export async function forgetAdapted(store: FileStore, task: TaskRow, vendor: AdaptedVendor): Promise<void> {
  if (!vendor.video.download) await forgetVideo(store, task.id);
}
