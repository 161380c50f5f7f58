// The vendors of OpenAI's Videos API that speak another wire (Google's Veo,
// through the Gemini API and Vertex AI): what a video adaptor says, pure, of
// where a video is asked for and how, how it is followed, and where its bytes
// are. The relay does the I/O (relay/attempts/videoSubmit.ts submits,
// relay/tasks/googleVideos.ts polls, serves and forgets). A channel type with
// no video adaptor here (OpenAI's) takes the client's request as it came.
import type { ChannelConfig, ChannelProtocol, HttpTarget, UpstreamFailure } from '../types';
import { geminiVideos } from './gemini/videos';
import { vertexVideos } from './vertex/videos';

/** A create as the relay read it from the client's JSON or multipart body. */
export interface VideoCreate {
  prompt: string;
  seconds: number;
  /** WIDTHxHEIGHT, as OpenAI writes it. */
  size: string;
  /** The `input_reference` upload: the first frame. */
  image?: { bytes: Buffer; mimeType: string };
}

/** Where a finished video's bytes are. */
export type VideoOutput =
  /** A download URL the channel's key opens (the Gemini API's files). */
  | { kind: 'uri'; uri: string }
  /** The bytes themselves, in the poll's answer (Vertex AI without a storage bucket): the gateway keeps them. */
  | { kind: 'bytes'; bytes: Buffer; mimeType: string }
  /** A Cloud Storage object (Vertex AI with a storage bucket), which the gateway does not read. */
  | { kind: 'gcs'; uri: string };

/** What a poll's answer says of the video. */
export type VideoState =
  | { state: 'running' }
  | { state: 'completed'; output: VideoOutput }
  | { state: 'failed'; code: string; message: string }
  /** An answer with nothing usable in it: asked again later. */
  | { state: 'unreadable' };

/** A request to send: where, how, and its body when it has one. */
export type VideoRequest = HttpTarget & { body?: string };

export interface VideoAdaptor {
  /** The vendor's API reference. */
  docs: string;
  /** The create: its request (the model as the channel names it; `credential` from the channel's exchange, if it has one). */
  submit(channel: ChannelConfig, model: string, create: VideoCreate, credential?: string): VideoRequest | UpstreamFailure;
  /** The vendor's id of the operation from the create's 2xx answer. */
  readSubmit(body: string): string | UpstreamFailure;
  /** The poll of an operation. */
  poll(channel: ChannelConfig, operation: string, credential?: string): VideoRequest | UpstreamFailure;
  readPoll(body: string): VideoState;
  /** The GET of a `uri` output, or the refusal of a URL that is not the vendor's (the key goes with it). */
  download?(channel: ChannelConfig, uri: string): HttpTarget | UpstreamFailure;
  /** Classifies a non-2xx answer. */
  failure(status: number, body: string): UpstreamFailure;
}

const VIDEO_ADAPTORS: Partial<Record<ChannelProtocol, VideoAdaptor>> = { gemini: geminiVideos, vertex: vertexVideos };

/** The video adaptor of a channel's protocol; undefined for a vendor that speaks OpenAI's Videos API itself. */
export const videoAdaptorFor = (protocol: ChannelProtocol | undefined): VideoAdaptor | undefined =>
  protocol === undefined ? undefined : VIDEO_ADAPTORS[protocol];
