// Where a Coze chat goes and what it carries: the bot named by the model
// (`bot-<bot_id>`, as one-api names it), the conversation as
// additional_messages, always streamed (see index.ts).
import type { AdaptorCall, ChannelConfig, ChatContentPart, ChatMessage, ChatRequest, HttpTarget, UpstreamFailure } from '../../types';
import { contentText, trimmedBaseUrl, upstreamFailure } from '../../shared';

const DEFAULT_BASE_URL = 'https://api.coze.com';
const CHAT_PATH = '/v3/chat';

/** The `user_id` Coze requires when the client names no user (Coze keys its conversation memory by it). */
export const DEFAULT_USER_ID = 'switchboard';

/** The bot id in a model name: `bot-7379462189365198898` → `7379462189365198898`; a bare id passes as it is. */
export const botIdOf = (model: string): string => (model.startsWith('bot-') ? model.slice('bot-'.length) : model);

// ---- requests ----

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (!botIdOf(call.model))
    return upstreamFailure(400, 'a Coze model is named bot-<bot_id>', { type: 'invalid_request_error', retryable: false });
  return {
    url: `${trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL)}${CHAT_PATH}`,
    method: 'POST',
    headers: { Authorization: `Bearer ${channel.key}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
  };
}

interface CozeMessage {
  role: 'user' | 'assistant';
  type: 'question' | 'answer';
  content: string;
  content_type: 'text' | 'object_string';
}

/** A message with images goes as an object_string: a JSON list of text and image items. */
function contentOf(content: ChatMessage['content']): Pick<CozeMessage, 'content' | 'content_type'> {
  if (!Array.isArray(content) || !content.some((part) => part.type === 'image_url'))
    return { content: contentText(content), content_type: 'text' };
  const items = content.flatMap((part: ChatContentPart): Array<{ type: 'text'; text: string } | { type: 'image'; file_url: string }> => {
    if (part.type === 'image_url' && part.image_url?.url) return [{ type: 'image', file_url: part.image_url.url }];
    if (typeof part.text === 'string') return [{ type: 'text', text: part.text }];
    return [];
  });
  return { content: JSON.stringify(items), content_type: 'object_string' };
}

/**
 * The conversation as Coze's additional_messages. A bot's persona is set on
 * Coze, and the API has no system role: a system (or developer) message goes
 * as a user question, so its words still reach the bot. Tool calls have no
 * place (a bot's plugins are its own): a request offering function tools is
 * refused rather than answered as if they were not there.
 */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (request.tools && request.tools.length > 0) throw new Error('a Coze bot runs its own plugins; function tools cannot be offered to it');
  const messages: CozeMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'tool' || message.role === 'function') throw new Error('a Coze bot takes no tool results');
    const assistant = message.role === 'assistant';
    const content = contentOf(message.content);
    if (!content.content) continue;
    messages.push({ role: assistant ? 'assistant' : 'user', type: assistant ? 'answer' : 'question', ...content });
  }
  const body: Record<string, unknown> = {
    bot_id: botIdOf(call.model),
    user_id: typeof request.user === 'string' && request.user ? request.user : DEFAULT_USER_ID,
    stream: true,
    auto_save_history: true,
    additional_messages: messages,
  };
  return JSON.stringify(body);
}
