// Where a Replicate prediction goes and its input: a language model's
// `prompt`, `system_prompt` and sampling settings, as Meta's (and most) chat
// models on Replicate take them.
import type { AdaptorCall, ChannelConfig, ChatRequest, HttpTarget, UpstreamFailure } from '../../types';
import { contentText, trimmedBaseUrl, upstreamFailure } from '../../shared';

const DEFAULT_BASE_URL = 'https://api.replicate.com';

/**
 * How long Replicate may hold the request open for the prediction to finish
 * (its sync mode takes 1 to 60 seconds; past that it answers the prediction
 * still running).
 */
export const WAIT_SECONDS = 60;

/**
 * The path for a model: `owner/name` runs the model's latest version
 * (`/v1/models/{owner}/{name}/predictions`); `owner/name:version` (or a bare
 * version id) runs that version through `/v1/predictions`.
 */
function pathOf(model: string): string | undefined {
  if (/^[\w.-]+\/[\w.-]+$/.test(model)) return `/v1/models/${model}/predictions`;
  if (/^([\w.-]+\/[\w.-]+:)?[0-9a-f]{64}$/.test(model)) return '/v1/predictions';
  return undefined;
}

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  const path = pathOf(call.model);
  if (!path)
    return upstreamFailure(400, `a Replicate model is named owner/name or owner/name:version, not "${call.model}"`, {
      type: 'invalid_request_error',
      retryable: false,
    });
  const headers: Record<string, string> = { Authorization: `Bearer ${channel.key}`, 'Content-Type': 'application/json' };
  // a streamed call creates the prediction and follows its stream at once (stream.ts); a whole one waits for it to finish
  if (!call.stream) headers.Prefer = `wait=${WAIT_SECONDS}`;
  return { url: `${trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL)}${path}`, method: 'POST', headers };
}

/**
 * The conversation as a language model's input. System (and developer) text
 * is the `system_prompt`; a single user turn is the `prompt` as it is; a
 * longer conversation is written out as `role: text` lines ending with
 * `assistant:`, as one-api writes it, since these models take one prompt.
 */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (request.tools && request.tools.length > 0)
    throw new Error('Replicate language models take a prompt: function tools cannot be offered');
  const system: string[] = [];
  const turns: Array<{ role: string; text: string }> = [];
  for (const message of request.messages) {
    if (message.role === 'tool' || message.role === 'function')
      throw new Error('Replicate language models take a prompt: tool results cannot be sent');
    const text = contentText(message.content);
    if (message.role === 'system' || message.role === 'developer') system.push(text);
    else turns.push({ role: message.role, text });
  }
  const single = turns.length === 1 && turns[0].role === 'user';
  const input: Record<string, unknown> = {
    prompt: single ? turns[0].text : `${turns.map((turn) => `${turn.role}: ${turn.text}`).join('\n')}\nassistant:`,
  };
  if (system.length > 0) input.system_prompt = system.join('\n\n');
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') input.max_tokens = maxTokens;
  for (const field of ['temperature', 'top_p', 'top_k', 'presence_penalty', 'frequency_penalty', 'seed'] as const) {
    if (typeof request[field] === 'number') input[field] = request[field];
  }
  if (request.stop !== undefined && request.stop !== null) input.stop_sequences = [request.stop].flat().join(',');
  const body: Record<string, unknown> = { input };
  const version = /(?:^|:)([0-9a-f]{64})$/.exec(call.model);
  if (version) body.version = version[1];
  // asks for the prediction's event stream (its `urls.stream`)
  if (call.stream) body.stream = true;
  return JSON.stringify(body);
}
