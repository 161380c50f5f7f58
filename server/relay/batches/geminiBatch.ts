// A batch run at Gemini's Batch API (Google AI Studio, channel types 24 and
// 11), behind the same client as OpenAI's (upstream.ts), so that
// upstreamRun.ts submits, polls, cancels and settles both the same way. The
// lines, translated by geminiBatchLines.ts, are sent inline in
// models/{model}:batchGenerateContent while the body stays under Google's
// 20 MB; a larger batch is uploaded first as a JSONL file of {key, request}
// lines through the Files API's resumable upload, and the batch names it.
// Google answers a long-running Operation named `batches/…`: the task's
// upstream id. Results come inlined in the batch, or (for a file's batch) as
// a responses file, read line by line.
// The file is built whole in memory before it is sent: the resumable upload
// wants its length first, and the gateway already held the input whole when
// it checked it (input.ts, 200 MB at most).
// References: https://ai.google.dev/api/batch-mode
// https://ai.google.dev/gemini-api/docs/batch-mode  https://ai.google.dev/api/files
import { randomBytes } from 'node:crypto';
import type { ChannelConfig } from '../../protocols/types';
import { geminiFileResult, geminiRequestOf, geminiStateOf, modelPath, resourcePath } from './geminiBatchLines';
import type { UpstreamBatchClient, UpstreamBatchLine } from './upstream';
import { callVendor, callVendorJson, UpstreamBatchError, type BatchVendor, type CallOptions } from './upstreamHttp';
import { jsonlLines } from './upstreamLines';

/** Google's limit on a batchGenerateContent body with inlined requests. */
export const GEMINI_INLINE_LIMIT_BYTES = 20 * 1024 * 1024;
/** The resumable upload's piece (Google's own SDK sends 8 MB). */
const UPLOAD_PIECE_BYTES = 8 * 1024 * 1024;
const CHAT_ENDPOINT = '/v1/chat/completions';

export interface GeminiBatchOptions extends CallOptions {
  /** Above this many bytes the requests go as an uploaded file (tests lower it). */
  inlineLimitBytes?: number;
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
const malformed = (message: string) => new UpstreamBatchError(message, { code: 'upstream_malformed', retryable: true });

/** The batch's requests, translated, with its model; each line keyed by its custom_id. */
async function translated(lines: AsyncIterable<UpstreamBatchLine> | UpstreamBatchLine[], channel: ChannelConfig) {
  const entries: Array<{ key: string; request: Record<string, unknown> }> = [];
  let model: string | undefined;
  for await (const line of lines) {
    model ??= String(line.body.model);
    entries.push({ key: line.customId, request: geminiRequestOf(line, channel) });
  }
  if (!model) throw new UpstreamBatchError('the batch has no lines', { code: 'invalid_batch_input', retryable: false });
  return { model, entries };
}

/** Uploads `bytes` through the Files API's resumable protocol; the file's name (`files/…`). */
async function uploadFile(vendor: BatchVendor, bytes: Buffer, displayName: string, options: CallOptions): Promise<string> {
  const { response: started } = await callVendor(
    vendor,
    {
      method: 'POST',
      path: '/upload/v1beta/files',
      headers: {
        'content-type': 'application/json',
        'x-goog-upload-protocol': 'resumable',
        'x-goog-upload-command': 'start',
        'x-goog-upload-header-content-length': String(bytes.length),
        'x-goog-upload-header-content-type': 'application/jsonl',
      },
      body: JSON.stringify({ file: { displayName } }),
    },
    options,
  );
  await started.body?.cancel();
  const uploadUrl = started.headers.get('x-goog-upload-url');
  if (!uploadUrl) throw malformed('Gemini answered the upload without an upload URL');
  // the session's URL names Google's host; it is reached through the channel's base, as Google's SDK does
  const session = new URL(uploadUrl, vendor.base);
  let offset = 0;
  for (;;) {
    const piece = bytes.subarray(offset, offset + UPLOAD_PIECE_BYTES);
    const last = offset + piece.length >= bytes.length;
    const { response } = await callVendor(
      vendor,
      {
        method: 'POST',
        path: `${session.pathname}${session.search}`,
        headers: { 'x-goog-upload-command': last ? 'upload, finalize' : 'upload', 'x-goog-upload-offset': String(offset) },
        body: piece,
      },
      options,
    );
    offset += piece.length;
    if (last) {
      const answer = (await response.json().catch(() => undefined)) as { file?: { name?: unknown } } | undefined;
      const name = text(answer?.file?.name);
      if (response.headers.get('x-goog-upload-status') !== 'final' || !name) throw malformed('Gemini did not finalize the upload');
      return name;
    }
    await response.body?.cancel();
  }
}

async function deleteFile(vendor: BatchVendor, name: string, options: CallOptions): Promise<void> {
  try {
    const { response } = await callVendor(vendor, { method: 'DELETE', path: `/v1beta/${resourcePath(name)}` }, options);
    await response.body?.cancel();
  } catch (error) {
    if (error instanceof UpstreamBatchError && error.status === 404) return;
    throw error;
  }
}

/** The batch's input config: its requests inline while small enough, else an uploaded file (its name too). */
async function inputConfigOf(
  vendor: BatchVendor,
  entries: Array<{ key: string; request: Record<string, unknown> }>,
  displayName: string,
  options: GeminiBatchOptions,
): Promise<{ inputConfig: Record<string, unknown>; inputFileId?: string }> {
  const requests = entries.map(({ key, request }) => ({ request, metadata: { key } }));
  const inline = { requests: { requests } };
  const size = Buffer.byteLength(JSON.stringify(inline));
  if (size <= (options.inlineLimitBytes ?? GEMINI_INLINE_LIMIT_BYTES)) return { inputConfig: inline };
  const jsonl = Buffer.from(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  const inputFileId = await uploadFile(vendor, jsonl, displayName, options);
  return { inputConfig: { fileName: inputFileId }, inputFileId };
}

/** The Batch API client of a Gemini channel (`channel` for the codec; the vendor carries its key). */
export function geminiBatchClient(vendor: BatchVendor, channel: ChannelConfig, options: GeminiBatchOptions): UpstreamBatchClient {
  return {
    async submit(lines, endpoint) {
      if (endpoint !== CHAT_ENDPOINT)
        throw new UpstreamBatchError(`Gemini's Batch API runs ${CHAT_ENDPOINT} only`, { code: 'invalid_batch_input', retryable: false });
      const { model, entries } = await translated(lines, channel);
      const displayName = `switchboard-${randomBytes(8).toString('hex')}`;
      const { inputConfig, inputFileId } = await inputConfigOf(vendor, entries, displayName, options);
      try {
        const operation = await callVendorJson(
          vendor,
          {
            method: 'POST',
            path: `/v1beta/${modelPath(model)}:batchGenerateContent`,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ batch: { displayName, inputConfig } }),
          },
          options,
        );
        const batchId = text(operation.name) ?? text((operation.metadata as { name?: unknown } | undefined)?.name);
        if (!batchId?.startsWith('batches/')) throw malformed('Gemini answered the batch without its name');
        return { batchId, inputFileId: inputFileId ?? '' };
      } catch (error) {
        // no batch holds the file: it goes now
        if (inputFileId) await deleteFile(vendor, inputFileId, options).catch(() => undefined);
        throw error;
      }
    },

    async poll(batchId) {
      return geminiStateOf(await callVendorJson(vendor, { method: 'GET', path: `/v1beta/${resourcePath(batchId)}` }, options));
    },

    async *results(state) {
      yield* state.inlineResults ?? [];
      if (!state.outputFileId) return;
      const path = `/download/v1beta/${resourcePath(state.outputFileId)}:download?alt=media`;
      const { response, idle } = await callVendor(vendor, { method: 'GET', path, keepTimer: true }, options);
      try {
        if (!response.body) return;
        for await (const line of jsonlLines(response.body, idle.touch)) {
          const result = geminiFileResult(line, '');
          if (result) yield result;
        }
      } catch (error) {
        if (error instanceof UpstreamBatchError) throw error;
        throw new UpstreamBatchError(`Gemini's responses file broke off: ${(error as Error).message}`, {
          code: 'upstream_unreachable',
          retryable: true,
        });
      } finally {
        idle.stop();
      }
    },

    async cancel(batchId) {
      const { response } = await callVendor(vendor, { method: 'POST', path: `/v1beta/${resourcePath(batchId)}:cancel` }, options);
      await response.body?.cancel();
    },

    async remove(state) {
      for (const name of new Set([state.inputFileId, state.outputFileId])) {
        if (name) await deleteFile(vendor, name, options);
      }
    },
  };
}
