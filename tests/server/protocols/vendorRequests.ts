// How to read each vendor's encoded chat request back (the tests' side of
// every adaptor's encodeChat): where its system prompt, turns, tools, images,
// tool calls and tool results, output limit, stream flag and prompt-cache
// marks sit. Shared by the client-fixture replay (clientFixtures.test.ts) and
// the translation round trips (inboundContract.ts), so each vendor's form is
// written down once. Exhaustive over ChannelProtocol: a new adaptor does not
// compile until it says how its requests read.
import type { ChannelProtocol, HttpTarget } from '../../../server/protocols/types';
import { jsonText } from '../../support/jsonText';

/** What a vendor request carries, in the relay's terms. */
export interface VendorRequestView {
  /** The model to encode for: the vendor's vision model where images depend on it (DashScope's qwen-vl). */
  model: string;
  /** All system text, in order. */
  systemText(body: Body): string;
  /** Every text of the conversation after the system prompt (turns and tool results), in order. */
  conversationText(body: Body): string;
  tools(body: Body): Array<{ name: string; parameters: Record<string, unknown> | undefined }>;
  /** The images the turns carry (a data URL's base64 data, or a URL); undefined when the vendor's chat takes none. */
  images(body: Body): string[] | undefined;
  /** The assistant's earlier tool calls as the vendor reads them (name and parsed arguments). */
  toolCalls(body: Body): Array<{ name: string; arguments: unknown }>;
  /** The tool results, as text. */
  toolResults(body: Body): string[];
  /** The output limit sent (the vendor's own field). */
  outputLimit(body: Body): number | undefined;
  /** Whether the call asks for a stream (in the body, or for some vendors in the URL or headers). */
  streamed(body: Body, target: HttpTarget): boolean;
  /** The vendor answers only as a stream (a WebSocket): the relay reads it whole for a client that asked for no stream. */
  alwaysStreams?: true;
  /** Anthropic's `cache_control` marks carried; undefined for a vendor without prompt-cache marks. */
  cacheMarks?(body: Body): Array<{ text: string; cache_control: unknown }>;
  /**
   * The vendor's chat carries text turns only (a Coze bot runs its own
   * plugins): a request offering tools or holding tool turns is refused by
   * encodeChat, and only the texts of any other request are checked.
   */
  plainTurns?: true;
  /** With plainTurns: only the last user message's text is sent (DeepL translates it). */
  lastUserTextOnly?: true;
}

type Body = Record<string, unknown>;
type Part = Record<string, unknown>;

const list = (value: unknown): Part[] => (Array.isArray(value) ? (value as Part[]) : []);
const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : list(content)
        .map((part) => (typeof part.text === 'string' ? part.text : ''))
        .join('');
const parse = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value || '{}') : value);
const dataOf = (url: string) => (url.startsWith('data:') ? url.slice(url.indexOf(',') + 1) : url);

/** The OpenAI chat form (OpenAI, Azure, Zhipu v4; DashScope's messages under `input`). */
function openAiMessages(
  messagesOf: (body: Body) => Part[],
  tools: (body: Body) => Part[],
  limit: (body: Body) => unknown,
  streamed: VendorRequestView['streamed'],
  model = 'vendor-model',
): VendorRequestView {
  return {
    model,
    systemText: (body) =>
      messagesOf(body)
        .filter((message) => message.role === 'system')
        .map((message) => text(message.content))
        .join('\n\n'),
    conversationText: (body) =>
      messagesOf(body)
        .filter((message) => message.role !== 'system')
        .map((message) => text(message.content))
        .join('\n'),
    tools: (body) =>
      tools(body).map((tool) => ({
        name: String((tool.function as Part).name),
        parameters: (tool.function as Part).parameters as Body | undefined,
      })),
    images: (body) =>
      messagesOf(body).flatMap((message) =>
        list(message.content).flatMap((part) => {
          if (part.type === 'image_url') return [dataOf(String((part.image_url as Part).url))];
          return typeof part.image === 'string' ? [dataOf(part.image)] : [];
        }),
      ),
    toolCalls: (body) =>
      messagesOf(body).flatMap((message) =>
        list(message.tool_calls).map((call) => ({
          name: String((call.function as Part).name),
          arguments: parse((call.function as Part).arguments),
        })),
      ),
    toolResults: (body) =>
      messagesOf(body)
        .filter((message) => message.role === 'tool')
        .map((message) => text(message.content)),
    outputLimit: (body) => limit(body) as number | undefined,
    streamed,
  };
}

const openAiForm = openAiMessages(
  (body) => list(body.messages),
  (body) => list(body.tools),
  (body) => body.max_tokens ?? body.max_completion_tokens,
  (body) => body.stream === true,
);

const anthropicBlocks = (body: Body): Part[] => [
  ...list(body.system),
  ...list(body.messages).flatMap((message) => list(message.content)),
  ...list(body.tools),
];

const geminiParts = (body: Body): Part[] => list(body.contents).flatMap((content) => list(content.parts));

const baiduMessages = (body: Body) => list(body.messages);

const converseBlocks = (body: Body): Part[] => list(body.messages).flatMap((message) => list(message.content));
const converseText = (blocks: Part[]): string =>
  blocks
    .map((block) => (typeof block.text === 'string' ? block.text : block.json !== undefined ? JSON.stringify(block.json) : ''))
    .join('');

const sparkMessages = (body: Body) => list(((body.payload as Part | undefined)?.message as Part | undefined)?.text);

/** Gemini's generateContent form (Google's API, and Gemini models on Vertex AI). */
const geminiForm: VendorRequestView = {
  model: 'gemini-2.0-flash',
  systemText: (body) =>
    list((body.systemInstruction as Part | undefined)?.parts)
      .map((part) => jsonText(part.text ?? ''))
      .join('\n\n'),
  conversationText: (body) =>
    geminiParts(body)
      .map((part) =>
        typeof part.text === 'string' ? part.text : part.functionResponse ? JSON.stringify((part.functionResponse as Part).response) : '',
      )
      .join('\n'),
  tools: (body) =>
    list(body.tools)
      .flatMap((tool) => list(tool.functionDeclarations))
      .map((declaration) => ({ name: String(declaration.name), parameters: declaration.parameters as Body | undefined })),
  images: (body) =>
    geminiParts(body).flatMap((part) =>
      part.inlineData ? [String((part.inlineData as Part).data)] : part.fileData ? [String((part.fileData as Part).fileUri)] : [],
    ),
  toolCalls: (body) =>
    geminiParts(body)
      .filter((part) => part.functionCall)
      .map((part) => ({ name: String((part.functionCall as Part).name), arguments: (part.functionCall as Part).args })),
  toolResults: (body) =>
    geminiParts(body)
      .filter((part) => part.functionResponse)
      .map((part) => JSON.stringify((part.functionResponse as Part).response)),
  outputLimit: (body) => (body.generationConfig as Part | undefined)?.maxOutputTokens as number | undefined,
  // Gemini streams from another method, not on a body field
  streamed: (_body, target) => target.url.includes(':streamGenerateContent'),
};

export const VENDOR_REQUESTS: Record<ChannelProtocol, VendorRequestView> = {
  openai: openAiForm,
  azure: openAiForm,
  zhipu: { ...openAiForm, model: 'glm-4v-plus' },
  ali: openAiMessages(
    (body) => list((body.input as Part | undefined)?.messages),
    (body) => list((body.parameters as Part | undefined)?.tools),
    (body) => (body.parameters as Part | undefined)?.max_tokens,
    // DashScope streams on a header, and asks for incremental output in the body
    (body, target) => target.headers['X-DashScope-SSE'] === 'enable' && (body.parameters as Part).incremental_output === true,
    'qwen-vl-max',
  ),
  anthropic: {
    model: 'claude-sonnet-4-20250514',
    systemText: (body) => text(body.system),
    conversationText: (body) =>
      list(body.messages)
        .flatMap((message) =>
          typeof message.content === 'string'
            ? [message.content]
            : list(message.content).map((block) => (block.type === 'tool_result' ? text(block.content) : text([block]))),
        )
        .join('\n'),
    tools: (body) => list(body.tools).map((tool) => ({ name: String(tool.name), parameters: tool.input_schema as Body | undefined })),
    images: (body) =>
      anthropicBlocks(body)
        .flatMap((block) => (block.type === 'tool_result' ? [block, ...list(block.content)] : [block]))
        .filter((block) => block.type === 'image')
        .map((block) => {
          const source = block.source as Part;
          return String(source.type === 'base64' ? source.data : source.url);
        }),
    toolCalls: (body) =>
      anthropicBlocks(body)
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({ name: String(block.name), arguments: block.input })),
    toolResults: (body) =>
      anthropicBlocks(body)
        .filter((block) => block.type === 'tool_result')
        .map((block) => text(block.content)),
    outputLimit: (body) => body.max_tokens as number | undefined,
    streamed: (body) => body.stream === true,
    cacheMarks: (body) =>
      anthropicBlocks(body)
        .filter((block) => block.cache_control !== undefined)
        .map((block) => ({ text: jsonText(block.text ?? block.name ?? ''), cache_control: block.cache_control })),
  },
  gemini: geminiForm,
  baidu: {
    model: 'ernie-4.0-8k',
    systemText: (body) => jsonText(body.system ?? ''),
    conversationText: (body) =>
      baiduMessages(body)
        .map((message) => text(message.content))
        .join('\n'),
    tools: (body) => list(body.functions).map((fn) => ({ name: String(fn.name), parameters: fn.parameters as Body | undefined })),
    // ERNIE's chat takes text only
    images: () => undefined,
    toolCalls: (body) =>
      baiduMessages(body)
        .filter((message) => message.function_call)
        .map((message) => ({
          name: String((message.function_call as Part).name),
          arguments: parse((message.function_call as Part).arguments),
        })),
    toolResults: (body) =>
      baiduMessages(body)
        .filter((message) => message.role === 'function')
        .map((message) => text(message.content)),
    outputLimit: (body) => body.max_output_tokens as number | undefined,
    streamed: (body) => body.stream === true,
  },
  bedrock: {
    model: 'anthropic.claude-3-5-sonnet-20241022-v2:0',
    systemText: (body) =>
      list(body.system)
        .filter((block) => typeof block.text === 'string')
        .map((block) => String(block.text))
        .join('\n\n'),
    conversationText: (body) =>
      converseBlocks(body)
        .map((block) => (block.toolResult ? converseText(list((block.toolResult as Part).content)) : converseText([block])))
        .filter((text) => text !== '')
        .join('\n'),
    tools: (body) =>
      list((body.toolConfig as Part | undefined)?.tools).map((tool) => {
        const spec = tool.toolSpec as Part;
        return { name: String(spec.name), parameters: (spec.inputSchema as Part | undefined)?.json as Body | undefined };
      }),
    images: (body) =>
      converseBlocks(body)
        .flatMap((block) => (block.toolResult ? list((block.toolResult as Part).content) : [block]))
        .filter((block) => block.image)
        .map((block) => String(((block.image as Part).source as Part).bytes)),
    toolCalls: (body) =>
      converseBlocks(body)
        .filter((block) => block.toolUse)
        .map((block) => ({ name: String((block.toolUse as Part).name), arguments: (block.toolUse as Part).input })),
    toolResults: (body) =>
      converseBlocks(body)
        .filter((block) => block.toolResult)
        .map((block) => converseText(list((block.toolResult as Part).content))),
    outputLimit: (body) => (body.inferenceConfig as Part | undefined)?.maxTokens as number | undefined,
    // ConverseStream is another path, not a body field
    streamed: (_body, target) => target.url.endsWith('/converse-stream'),
  },
  xunfei: {
    model: 'generalv3.5',
    systemText: (body) =>
      sparkMessages(body)
        .filter((message) => message.role === 'system')
        .map((message) => text(message.content))
        .join('\n\n'),
    conversationText: (body) =>
      sparkMessages(body)
        .filter((message) => message.role !== 'system')
        .map((message) => text(message.content))
        .join('\n'),
    tools: (body) =>
      list(((body.payload as Part).functions as Part | undefined)?.text).map((fn) => ({
        name: String(fn.name),
        parameters: fn.parameters as Body | undefined,
      })),
    // Spark's chat takes text only
    images: () => undefined,
    // Spark has no tool turns: an earlier call is the assistant's text `name(arguments)`, its result a user turn
    toolCalls: (body) =>
      sparkMessages(body)
        .filter((message) => message.role === 'assistant')
        .flatMap((message) => {
          const match = /^([\w-]+)\((.*)\)$/s.exec(text(message.content));
          return match ? [{ name: match[1], arguments: JSON.parse(match[2]) as unknown }] : [];
        }),
    toolResults: (body) =>
      sparkMessages(body)
        .filter((message) => message.role === 'user')
        .map((message) => text(message.content)),
    outputLimit: (body) => ((body.parameter as Part).chat as Part).max_tokens as number | undefined,
    // a WebSocket call always streams
    streamed: () => true,
    alwaysStreams: true,
  },
  // the contract's Vertex fixtures are a Gemini model's (Claude on Vertex is the anthropic form, less the model)
  vertex: geminiForm,
  coze: {
    model: 'bot-7379462189365198898',
    // Coze has no system role: system text goes as a user question, before the turns
    systemText: (body) =>
      list(body.additional_messages)
        .filter((message) => message.role === 'user')
        .map((message) => String(message.content))
        .join('\n\n'),
    conversationText: (body) =>
      list(body.additional_messages)
        .map((message) => String(message.content))
        .join('\n'),
    tools: () => [],
    images: (body) =>
      list(body.additional_messages)
        .filter((message) => message.content_type === 'object_string')
        .flatMap((message) =>
          list(JSON.parse(String(message.content))).flatMap((item) => (item.type === 'image' ? [dataOf(String(item.file_url))] : [])),
        ),
    toolCalls: () => [],
    toolResults: () => [],
    outputLimit: () => undefined,
    // every Coze call streams (a whole answer is the stream read to its end)
    streamed: (body) => body.stream === true,
    plainTurns: true,
  },
  replicate: {
    model: 'meta/meta-llama-3-8b-instruct',
    systemText: (body) => text((body.input as Part).system_prompt),
    conversationText: (body) => text((body.input as Part).prompt),
    tools: () => [],
    images: () => undefined,
    toolCalls: () => [],
    toolResults: () => [],
    outputLimit: (body) => (body.input as Part).max_tokens as number | undefined,
    // a streamed call creates the prediction with `stream: true` and follows its event stream; a whole one waits in sync mode
    streamed: (body) => body.stream === true,
    plainTurns: true,
  },
  deepl: {
    model: 'deepl-zh',
    // only the last user message is translated: the rest of a conversation has no place
    systemText: () => '',
    conversationText: (body) => (Array.isArray(body.text) ? (body.text as string[]).join('\n') : ''),
    tools: () => [],
    images: () => undefined,
    toolCalls: () => [],
    toolResults: () => [],
    outputLimit: () => undefined,
    streamed: () => false,
    plainTurns: true,
    lastUserTextOnly: true,
  },
  'aiproxy-library': {
    model: 'gpt-3.5-turbo',
    // the last user message is the question: the rest of a conversation has no place
    systemText: () => '',
    conversationText: (body) => text(body.query),
    tools: () => [],
    images: () => undefined,
    toolCalls: () => [],
    toolResults: () => [],
    outputLimit: () => undefined,
    streamed: (body) => body.stream === true,
    plainTurns: true,
    lastUserTextOnly: true,
  },
};
