// The Gemini client side of the relay (`POST /v1beta/models/{model}:generateContent`
// and `:streamGenerateContent?alt=sse`, what @google/genai and Google's other
// SDKs call): https://ai.google.dev/api/generate-content. Pure: no I/O.
//
// Unlike OpenAI's and Anthropic's, a Gemini body names neither the model nor
// whether to stream: both are in the path (`models/{model}:{method}`), which the
// route reads (server/routes/v1/geminiNative.ts) and hands over as `pathModel`
// and `pathMethod`. So for a channel that speaks Gemini (types 24 and 11) the
// client's bytes go on as they are: the channel's adaptor writes the upstream
// model and method into the URL; only a limit the balance lowered rewrites
// `generationConfig.maxOutputTokens`. The answer's usage is read as it passes:
// the JSON `usageMetadata`, or the last SSE event's (Google's figures are
// cumulative, the last event's are the whole answer's).
//
// For any other channel the request is decoded into the relay's chat form
// (`chatRequest`) and the decoded answer written back as Gemini's
// (`encodeResponse`, `encodeStream`: `data: {...}\r\n\r\n` events each with the
// candidates' new parts, the finish reason and usage on the last).
//
// Gemini's function calls carry no ids (newer models sometimes send one): a
// call in the history gets a stable one from its place in the conversation and
// its name, and a functionResponse goes to the earliest unanswered call of its
// name (or its own id when it has one).
//
// Usage: thoughtsTokenCount is output, toolUsePromptTokenCount input, as the
// upstream adaptor reads them (../upstream/gemini `usageOfGemini`, its json.ts usageOf).
//
// The request's chat form is in ./geminiNativeRequest.ts, the answers written
// back in ./geminiNativeAnswer.ts; here are the codec, the request's checks,
// the prompt's count and the passthrough stream watcher.
import type { IncomingHttpHeaders } from 'node:http';
import { encodeResponse, GenerateContentStreamEncoder, googleErrorBody } from './geminiNativeAnswer';
import { chatRequestOf, configOf, contentsOf, partsOf, systemText, uncarriedTools } from './geminiNativeRequest';
import { answerField } from './jsonField';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import { PassingUsageWatcher } from './passingWatcher';
import type { InboundCodec, JsonAnswer, TextMode } from './types';
import { count, isObject, MAX_TOKENS_LIMIT, parseJson } from '../shared';
import type { Usage } from '../types';
import { decodeGeminiParts, usageOfGemini, type GeminiResponse, type GeminiUsageMetadata } from '../upstream/gemini';

/**
 * What Google would refuse in the request's structure, named as it names it:
 * a content that is not an object with a list of part objects, tools that are
 * not a list of objects, a function declaration without a name. Refused here,
 * before anything is held, so a channel that passes bytes never carries them
 * (Google answers 400 INVALID_ARGUMENT; a lenient proxy might answer worse).
 */
function shapeProblem(body: Record<string, unknown>): string | undefined {
  const contents = body.contents as unknown[];
  for (const [index, content] of contents.entries()) {
    if (!isObject(content) || !Array.isArray(content.parts))
      return `* GenerateContentRequest.contents[${index}].parts: must be a list of parts`;
    if (content.parts.some((part) => !isObject(part)))
      return `* GenerateContentRequest.contents[${index}].parts: each part must be an object`;
  }
  if (
    body.systemInstruction !== undefined &&
    typeof body.systemInstruction !== 'string' &&
    !(isObject(body.systemInstruction) && Array.isArray(body.systemInstruction.parts))
  ) {
    return '* GenerateContentRequest.system_instruction: must be a content with parts';
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return '* GenerateContentRequest.tools: must be a list of tools';
    for (const [index, tool] of body.tools.entries()) {
      if (!isObject(tool)) return `* GenerateContentRequest.tools[${index}]: must be a tool object`;
      const declarations = tool.functionDeclarations ?? tool.function_declarations;
      if (declarations === undefined) continue;
      if (
        !Array.isArray(declarations) ||
        declarations.some((declaration) => !isObject(declaration) || typeof declaration.name !== 'string' || declaration.name === '')
      ) {
        return `* GenerateContentRequest.tools[${index}].function_declarations: each must be an object with a name`;
      }
    }
  }
  if (body.generationConfig !== undefined && !isObject(body.generationConfig))
    return '* GenerateContentRequest.generation_config: must be an object';
  return undefined;
}

// ---- counting ----

/** The prompt's tokens: system, every part's text, function calls and results, tool declarations; 3 per turn and 3 to prime the reply. */
export function countGeminiPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [systemText(body.systemInstruction)];
  let total = 3;
  for (const content of contentsOf(body)) {
    total += 3;
    for (const part of partsOf(content)) {
      if (typeof part.text === 'string') texts.push(part.text);
      else if (part.inlineData || part.fileData) total += countPartTokens(part, model, options);
      else if (part.functionCall) texts.push(String(part.functionCall.name ?? ''), JSON.stringify(part.functionCall.args ?? {}));
      else if (part.functionResponse)
        texts.push(String(part.functionResponse.name ?? ''), JSON.stringify(part.functionResponse.response ?? {}));
    }
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- the passthrough stream watcher ----

/** Passes Gemini's event stream on as it came; reads its usage (the last event's) and text. */
export class GenerateContentUsageWatcher extends PassingUsageWatcher {
  private usage: GeminiUsageMetadata | undefined;
  /** Google's figures are the whole answer's only once it finished (or the prompt was blocked). */
  private finished = false;

  protected readEvent(data: string): void {
    const parsed = parseJson(data) as GeminiResponse | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    if (parsed.usageMetadata && typeof parsed.usageMetadata === 'object') this.usage = parsed.usageMetadata;
    if (parsed.promptFeedback?.blockReason) this.finished = true;
    for (const candidate of Array.isArray(parsed.candidates) ? parsed.candidates : []) {
      this.text += decodeGeminiParts(candidate?.content?.parts).text;
      if (candidate?.finishReason) this.finished = true;
    }
  }

  reportedUsage(): Usage | undefined {
    return this.finished && this.usage ? streamUsageOf(this.usage) : undefined;
  }
}

// ---- the codec ----

function streamUsageOf(metadata: GeminiUsageMetadata): Usage {
  const { promptTokens, completionTokens, cachedPromptTokens } = usageOfGemini(metadata);
  return { promptTokens, completionTokens, cachedPromptTokens };
}

function reportedJsonUsage(json: JsonAnswer): Usage | undefined {
  const metadata = answerField(json, 'usageMetadata') as GeminiUsageMetadata | null | undefined;
  if (!metadata || typeof metadata !== 'object') return undefined;
  const billed = streamUsageOf(metadata);
  return billed.promptTokens + billed.completionTokens > 0 ? billed : undefined;
}

function answerText(value: unknown): string {
  const candidates = (value as GeminiResponse | undefined)?.candidates;
  return Array.isArray(candidates) ? candidates.map((candidate) => decodeGeminiParts(candidate?.content?.parts).text).join('') : '';
}

/** `x-goog-api-key` (Google's own header; the route puts a `?key=` there too), else the Authorization header as it is. */
function authorization(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-goog-api-key'];
  if (typeof key === 'string' && key !== '') return `Bearer ${key}`;
  const header = headers.authorization;
  return typeof header === 'string' ? header : undefined;
}

/** The methods of `models/{model}:{method}` this codec serves, and whether each streams. */
export const GEMINI_METHODS: Readonly<Record<string, { streamed: boolean }>> = {
  generateContent: { streamed: false },
  streamGenerateContent: { streamed: true },
};

export const geminiNative = {
  protocol: 'gemini',
  contentType: 'application/json',
  authorization,
  model: (_mode: TextMode, _body: Record<string, unknown>, pathModel: string | undefined) => (pathModel ?? '').trim(),
  check(_mode, body) {
    if (contentsOf(body).length === 0)
      return { message: '* GenerateContentRequest.contents: contents is not specified', code: 'INVALID_ARGUMENT' };
    const malformed = shapeProblem(body);
    if (malformed) return { message: malformed, code: 'INVALID_ARGUMENT' };
    const limit = configOf(body).maxOutputTokens;
    if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_TOKENS_LIMIT)) {
      return {
        message: `* GenerateContentRequest.generation_config.max_output_tokens: must be an integer from 1 to ${MAX_TOKENS_LIMIT}`,
        code: 'INVALID_ARGUMENT',
      };
    }
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countGeminiPromptTokens(body, model, options),
  outputLimit: (body) => count(configOf(body).maxOutputTokens),
  answers: (_mode, body) => count(configOf(body).candidateCount) || 1,
  streamed: (_body, pathMethod) => GEMINI_METHODS[pathMethod ?? '']?.streamed === true,
  // Gemini's stream always reports its usage
  streamUsageAskable: () => false,
  clientAskedUsage: () => false,
  // the body names no model: the channel's adaptor writes the upstream's into the path
  modelUnchanged: (_body, _upstreamModel) => true,
  encodeChanged: (body, change) =>
    JSON.stringify(
      change.outputLimit === undefined ? body : { ...body, generationConfig: { ...configOf(body), maxOutputTokens: change.outputLimit } },
    ),
  jsonUsage: reportedJsonUsage,
  answerText,
  watchStream: (_stripUsageEvent: boolean) => new GenerateContentUsageWatcher(),
  errorBody: googleErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string) => new GenerateContentStreamEncoder(model),
} satisfies InboundCodec;
