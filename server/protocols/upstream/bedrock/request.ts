// The Converse request: where it goes (target), the OpenAI chat request in
// Converse's shape (encodeChat), and the SigV4 signature over both (sign).
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatMessage,
  type ChatRequest,
  type ChatTool,
  type HttpTarget,
  type UpstreamFailure,
} from '../../types';
import { contentText, count, dataUrl, isObject, parseJson, stopList, trimmedBaseUrl, upstreamFailure } from '../../shared';
import { bedrockKey } from './keys';
import { bedrockModelId, isClaudeOnBedrock } from './models';
import { thinkingFor } from '../anthropic';
import { rerankTarget } from './rerank';
import { bedrockLibrariesLoaded, loadBedrockLibraries } from './libraries';
import { signV4 } from './sigv4';

// ---- the vendor's shapes (only what is written) ----

type ConverseBlock = Record<string, unknown>;

interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

// ---- request ----

/** Converse's image formats, by media type. */
const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * An image part as a Converse image block. Converse takes images as bytes (or
 * from S3), never by URL: an image given by URL is refused here, with the
 * reason, rather than fetched by the gateway.
 */
function imageBlock(url: string): ConverseBlock {
  const inline = dataUrl(url);
  if (!inline) throw new Error('Bedrock takes images only inline (a data: URL with base64 bytes), not by URL');
  const format = IMAGE_FORMATS[inline.mediaType.toLowerCase()];
  if (!format) throw new Error(`Bedrock takes png, jpeg, gif or webp images, not ${inline.mediaType}`);
  return { image: { format, source: { bytes: inline.data } } };
}

/** A client's content as Converse blocks (empty texts dropped: Converse refuses them); a cache point after a part marked for the prompt cache. */
function contentBlocks(content: ChatMessage['content'], caching: boolean): ConverseBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: ConverseBlock[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') blocks.push({ text: part.text });
    else if (part.type === 'image_url') {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      if (typeof url === 'string' && url !== '') blocks.push(imageBlock(url));
      else continue;
    } else continue;
    if (caching && isObject(part.cache_control)) blocks.push(CACHE_POINT);
  }
  return blocks;
}

/** Converse's prompt-cache mark: the content before it is cached (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html). */
const CACHE_POINT: ConverseBlock = { cachePoint: { type: 'default' } };

function toolInput(argumentsText: string): unknown {
  const parsed = parseJson(argumentsText || '{}');
  return isObject(parsed) ? parsed : {};
}

/** A tool's answer: its text, or its text and images; Converse wants at least one block. */
function toolResultContent(content: ChatMessage['content']): ConverseBlock[] {
  const blocks = Array.isArray(content) ? contentBlocks(content, false) : [];
  if (blocks.length > 0) return blocks;
  return [{ text: contentText(content) }];
}

/** The turns: system messages left out, roles merged so user and assistant alternate (as Converse requires). */
function conversation(messages: readonly ChatMessage[], caching: boolean): ConverseMessage[] {
  const turns: ConverseMessage[] = [];
  const add = (role: 'user' | 'assistant', blocks: ConverseBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') continue;
    if (message.role === 'assistant') {
      const blocks = contentBlocks(message.content, caching);
      for (const call of message.tool_calls ?? []) {
        blocks.push({ toolUse: { toolUseId: call.id, name: call.function?.name ?? '', input: toolInput(call.function?.arguments ?? '') } });
      }
      add('assistant', blocks);
    } else if (message.role === 'tool') {
      add('user', [{ toolResult: { toolUseId: message.tool_call_id ?? '', content: toolResultContent(message.content) } }]);
    } else {
      add('user', contentBlocks(message.content, caching));
    }
  }
  return turns;
}

/** OpenAI's tool_choice in Converse's terms; undefined for `auto`, `none` and nothing (Converse has no `none`: the model is then left to choose). */
function toolChoice(choice: ChatRequest['tool_choice']): Record<string, unknown> | undefined {
  if (choice === 'required') return { any: {} };
  if (isObject(choice) && choice.function?.name) return { tool: { name: choice.function.name } };
  return undefined;
}

/**
 * Converse's toolConfig: the client's function tools and its choice. Converse refuses toolUse and toolResult
 * blocks without a toolConfig: a client that sends the history of a tool call without the tools gets them
 * declared from that history (any input), as the vendor requires. Undefined when neither is there.
 */
function toolConfigOf(
  tools: ChatTool[],
  choice: Record<string, unknown> | undefined,
  messages: ConverseMessage[],
): Record<string, unknown> | undefined {
  if (tools.length > 0) {
    const toolConfig: Record<string, unknown> = {
      tools: tools.map((tool) => ({
        toolSpec: {
          name: tool.function.name,
          ...(tool.function.description ? { description: tool.function.description } : {}),
          inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
        },
      })),
    };
    if (choice) toolConfig.toolChoice = choice;
    return toolConfig;
  }
  const used = [
    ...new Set(messages.flatMap((turn) => turn.content.flatMap((block) => (isObject(block.toolUse) ? [String(block.toolUse.name)] : [])))),
  ];
  const answered = messages.some((turn) => turn.content.some((block) => isObject(block.toolResult)));
  if (used.length === 0 && !answered) return undefined;
  const names = used.length > 0 ? used : ['tool'];
  return { tools: names.map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object', properties: {} } } } })) };
}

/**
 * The model's own fields beyond Converse's common ones, for Claude: Anthropic's top_k and extended thinking
 * (with which Anthropic refuses a changed temperature or top_k, or top_p below 0.95: those are dropped).
 */
function setClaudeFields(
  body: Record<string, unknown>,
  inference: Record<string, unknown>,
  request: ChatRequest,
  asked: { modelId: string; maxTokens: number; choice: Record<string, unknown> | undefined },
): void {
  const additional: Record<string, unknown> = {};
  if (typeof request.top_k === 'number') additional.top_k = request.top_k;
  const { modelId, maxTokens, choice } = asked;
  const forced = choice ? { type: 'any' in choice ? 'any' : 'tool' } : undefined;
  const thinking = isObject(request.thinking)
    ? request.thinking
    : thinkingFor(request.reasoning_effort, modelId.replace(/^(?:[a-z]+\.)?anthropic\./, ''), {
        max_tokens: maxTokens || undefined,
        tool_choice: forced,
      });
  if (thinking) {
    additional.thinking = thinking;
    delete inference.temperature;
    delete additional.top_k;
    if (typeof inference.topP === 'number' && inference.topP < 0.95) delete inference.topP;
    if (Object.keys(inference).length === 0) delete body.inferenceConfig;
  }
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;
}

/** An OpenAI chat request as a Converse body. */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const modelId = bedrockModelId(call.model);
  const claude = isClaudeOnBedrock(modelId);
  const system = request.messages
    .filter((message) => message.role === 'system' || message.role === 'developer')
    .flatMap((message) => contentBlocks(message.content, claude))
    .filter((block) => 'text' in block || 'cachePoint' in block);
  const messages = conversation(request.messages, claude);
  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body.system = system;
  const inference: Record<string, unknown> = {};
  const maxTokens = count(request.max_tokens) || count(request.max_completion_tokens);
  if (maxTokens > 0) inference.maxTokens = maxTokens;
  if (typeof request.temperature === 'number') inference.temperature = request.temperature;
  if (typeof request.top_p === 'number') inference.topP = request.top_p;
  const stops = stopList(request.stop);
  if (stops.length > 0) inference.stopSequences = stops;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  const tools = (request.tools ?? []).filter((tool) => tool?.type === 'function' && tool.function?.name);
  const choice = tools.length > 0 ? toolChoice(request.tool_choice) : undefined;
  const toolConfig = toolConfigOf(tools, choice, messages);
  if (toolConfig) body.toolConfig = toolConfig;
  if (claude) setClaudeFields(body, inference, request, { modelId, maxTokens, choice });
  return JSON.stringify(body);
}

// ---- where it goes ----

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (call.operation === 'rerank') return rerankTarget(channel);
  if (call.operation === 'embeddings') return invokeTarget(channel, call);
  if (call.operation !== 'chat')
    return upstreamFailure(501, `Bedrock channels do not offer ${call.operation}`, { code: 'operation_unsupported', retryable: true });
  const key = bedrockKey(channel);
  if (isUpstreamFailure(key)) return key;
  const base = trimmedBaseUrl(channel.baseUrl, `https://bedrock-runtime.${key.region}.amazonaws.com`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: call.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
  };
  if (key.kind === 'api-key') headers.authorization = `Bearer ${key.token}`;
  return {
    url: `${base}/model/${encodeURIComponent(bedrockModelId(call.model))}/${call.stream ? 'converse-stream' : 'converse'}`,
    method: 'POST',
    headers,
  };
}

/** InvokeModel, whole (an embedding model's own body). */
function invokeTarget(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  const key = bedrockKey(channel);
  if (isUpstreamFailure(key)) return key;
  const base = trimmedBaseUrl(channel.baseUrl, `https://bedrock-runtime.${key.region}.amazonaws.com`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key.kind === 'api-key') headers.authorization = `Bearer ${key.token}`;
  return { url: `${base}/model/${encodeURIComponent(bedrockModelId(call.model))}/invoke`, method: 'POST', headers };
}

// ---- the signature ----

/**
 * Signs the call with AWS Signature Version 4 (service `bedrock`) when the key
 * is IAM credentials; a Bedrock API key's call goes as it is (its bearer
 * header is the target's). The signature covers the host, the path, the
 * headers and the body, at the call's time (sigv4.ts).
 */
export function sign(
  target: HttpTarget,
  body: string,
  channel: ChannelConfig,
  call: AdaptorCall,
): HttpTarget | UpstreamFailure | Promise<HttpTarget | UpstreamFailure> {
  const key = bedrockKey(channel);
  if (isUpstreamFailure(key)) return key;
  // the answer's decoder needs the codec whichever the key: loaded before any Bedrock call
  if (!bedrockLibrariesLoaded()) return loadBedrockLibraries().then(() => sign(target, body, channel, call));
  if (key.kind === 'api-key') return target;
  const url = new URL(target.url);
  const credentials = {
    accessKeyId: key.accessKeyId,
    secretAccessKey: key.secretAccessKey,
    ...(key.sessionToken ? { sessionToken: key.sessionToken } : {}),
  };
  const headers = signV4(
    {
      method: target.method,
      host: url.host,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: target.headers,
      body,
    },
    credentials,
    { region: key.region, service: 'bedrock' },
    new Date(call.now * 1000),
  );
  return { ...target, headers };
}
