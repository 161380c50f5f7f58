// A loopback stand-in for Google's Gemini API (generativelanguage.googleapis.com/v1beta):
// generateContent, streamGenerateContent (?alt=sse word by word, or the JSON array
// without it) and batchEmbedContents, with Google's own error shapes. It checks
// requests as strictly as Google does where an adaptor is likely to slip (unknown
// fields, roles, schema keywords Google refuses) so a test through it proves the
// adaptor's wire format. Usage is reported as Google reports it: prompt tokens =
// words in the prompt, completion tokens = words in the answer, partial usage on
// every stream event and the full figures on the last; nothing for embeddings.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, type EmulatedChannel, type EmulatedRequest, type ProtocolEmulator, type ReportedUsage } from './types';

const GOOD_KEY = 'AIzaSy-emulator-good-key';
const DEAD_KEY = 'AIzaSy-emulator-dead-key';
/** A prompt containing this word is blocked, as Google blocks a prompt (promptFeedback, no candidates). */
export const GEMINI_BLOCKED_WORD = 'forbidden-topic';

export const GEMINI_CHANNELS: EmulatedChannel[] = [
  {
    type: 24,
    key: GOOD_KEY,
    deadKey: DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'gemini-2.0-flash',
    embeddingModel: 'text-embedding-004',
  },
  {
    type: 11,
    key: GOOD_KEY,
    deadKey: DEAD_KEY,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'gemini-2.0-flash',
    embeddingModel: 'text-embedding-004',
  },
];

interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType?: string; data?: string };
  fileData?: { mimeType?: string; fileUri?: string };
  functionCall?: { name?: string; args?: Record<string, unknown> };
  functionResponse?: { name?: string; response?: Record<string, unknown> };
}
interface Content {
  role?: string;
  parts?: Part[];
}
interface Declaration {
  name?: string;
  description?: string;
  parameters?: { properties?: Record<string, { type?: string }>; required?: string[] };
}
interface GenerateRequest {
  contents?: Content[];
  systemInstruction?: Content;
  tools?: Array<{ functionDeclarations?: Declaration[] }>;
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: Record<string, unknown>;
}

class GoogleError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }

  body(): unknown {
    const error: Record<string, unknown> = { code: this.code, message: this.message, status: this.status };
    if (this.reason) {
      error.details = [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: this.reason,
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: this.message },
      ];
    }
    return { error };
  }
}

const REQUEST_FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
]);
const CONFIG_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'responseModalities',
]);
const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

const unknownName = (name: string, where: string) =>
  new GoogleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${name}" at '${where}': Cannot find field.`);

function checkSchema(schema: unknown, where: string): void {
  if (!schema || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_FIELDS.has(key)) throw unknownName(key, where);
    if (key === 'properties')
      for (const [name, property] of Object.entries(value as object)) checkSchema(property, `${where}.properties[${name}].value`);
    if (key === 'items') checkSchema(value, `${where}.items`);
    if (key === 'anyOf') (value as unknown[]).forEach((option, index) => checkSchema(option, `${where}.any_of[${index}]`));
  }
  const typed = schema as { type?: unknown; properties?: object };
  if (typed.type === 'object' && (!typed.properties || Object.keys(typed.properties).length === 0)) {
    throw new GoogleError(400, 'INVALID_ARGUMENT', `* GenerateContentRequest.${where}.properties: should be non-empty for OBJECT type\n`);
  }
}

function checkRequest(request: GenerateRequest): void {
  for (const field of Object.keys(request)) if (!REQUEST_FIELDS.has(field)) throw unknownName(field, '');
  for (const field of Object.keys(request.generationConfig ?? {}))
    if (!CONFIG_FIELDS.has(field)) throw unknownName(field, 'generation_config');
  if (!Array.isArray(request.contents) || request.contents.length === 0) {
    throw new GoogleError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n');
  }
  request.contents.forEach((content, index) => {
    if (content.role !== 'user' && content.role !== 'model') {
      throw new GoogleError(400, 'INVALID_ARGUMENT', `Please use a valid role: user, model.`);
    }
    if (!Array.isArray(content.parts) || content.parts.length === 0) {
      throw new GoogleError(
        400,
        'INVALID_ARGUMENT',
        `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.\n`,
      );
    }
    for (const part of content.parts) {
      const data = PART_FIELDS.filter((field) => field in part);
      if (data.length !== 1)
        throw new GoogleError(
          400,
          'INVALID_ARGUMENT',
          `* GenerateContentRequest.contents[${index}].parts: exactly one data field must be set\n`,
        );
      if (part.functionResponse && (!part.functionResponse.name || typeof part.functionResponse.response !== 'object')) {
        throw new GoogleError(
          400,
          'INVALID_ARGUMENT',
          `* GenerateContentRequest.contents[${index}].parts.function_response.name: Name cannot be empty.\n`,
        );
      }
    }
  });
  for (const tool of request.tools ?? []) {
    (tool.functionDeclarations ?? []).forEach((declaration, index) => {
      if (declaration.parameters) checkSchema(declaration.parameters, `tools[0].function_declarations[${index}].parameters`);
    });
  }
  const declared = (request.tools ?? []).some((tool) => (tool.functionDeclarations ?? []).length > 0);
  if (request.toolConfig?.functionCallingConfig && !declared) {
    throw new GoogleError(400, 'INVALID_ARGUMENT', 'Function calling config is set without function_declarations.');
  }
  const schema = request.generationConfig?.responseSchema;
  if (schema) checkSchema(schema, 'generation_config.response_schema');
}

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;
const textOf = (content: Content | undefined): string => (content?.parts ?? []).map((part) => part.text ?? '').join(' ');

/** What the model "says": deterministic, from the last turn. */
function reply(request: GenerateRequest): { text: string; call?: { name: string; args: Record<string, unknown> } } {
  const contents = request.contents ?? [];
  const last = contents[contents.length - 1];
  const answered = (last?.parts ?? []).filter((part) => part.functionResponse);
  if (answered.length > 0) {
    return {
      text: `Hello from Gemini, the tool said: ${answered.map((part) => JSON.stringify(part.functionResponse!.response)).join(' ')}`,
    };
  }
  const userText = (last?.parts ?? [])
    .map((part) => part.text ?? '')
    .filter(Boolean)
    .join(' ');
  const declarations = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  const config = request.toolConfig?.functionCallingConfig;
  if (declarations.length > 0 && config?.mode !== 'NONE') {
    const allowed = config?.allowedFunctionNames;
    const chosen = declarations.find((declaration) => !allowed || allowed.includes(declaration.name ?? '')) ?? declarations[0];
    // every required string argument gets the user's words (Google's Type enum is in capitals; lower case is taken too)
    const args: Record<string, unknown> = {};
    for (const name of chosen.parameters?.required ?? [])
      args[name] = chosen.parameters?.properties?.[name]?.type?.toLowerCase() === 'string' ? userText : 1;
    return { text: '', call: { name: chosen.name ?? '', args } };
  }
  return { text: `Hello from Gemini, you said: ${userText}` };
}

function promptWords(request: GenerateRequest): number {
  const parts = [textOf(request.systemInstruction), ...(request.contents ?? []).map(textOf)];
  return words(parts.join(' '));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export interface GeminiEmulatorOptions {
  /** A pause before each streamed event (for a client that leaves mid-stream). */
  wordDelayMs?: number;
}

export async function startGeminiEmulator(options: GeminiEmulatorOptions = {}): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  let served = 0;

  const sendJson = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    response.end(JSON.stringify(body));
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const raw = await readBody(incoming);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
      requests.push({ method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body, raw });
      throw new GoogleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unexpected token.`);
    }
    requests.push({ method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body, raw });

    const url = new URL(incoming.url ?? '/', 'http://emulator');
    const match = /^\/v1beta\/(models|tunedModels)\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/.exec(
      url.pathname,
    );
    if (!match) throw new GoogleError(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`);
    if (incoming.method !== 'POST') throw new GoogleError(405, 'METHOD_NOT_ALLOWED', 'Method not allowed.');
    const key = (incoming.headers['x-goog-api-key'] as string | undefined) ?? url.searchParams.get('key') ?? '';
    if (!key) {
      throw new GoogleError(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
    if (key !== GOOD_KEY)
      throw new GoogleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
    const model = decodeURIComponent(match[2]);
    const method = match[3];

    if (method === 'batchEmbedContents') {
      const batch = body as { requests?: Array<{ model?: string; content?: Content; outputDimensionality?: number }> } | undefined;
      if (!batch || !Array.isArray(batch.requests) || batch.requests.length === 0) {
        throw new GoogleError(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified\n');
      }
      const embeddings = batch.requests.map((entry, index) => {
        if (entry.model !== `models/${model}`) {
          throw new GoogleError(
            400,
            'INVALID_ARGUMENT',
            `* BatchEmbedContentsRequest.requests[${index}].model: unexpected model name format\n`,
          );
        }
        const length = entry.outputDimensionality ?? 768;
        const seed = words(textOf(entry.content)) + index;
        return { values: Array.from({ length }, (_, position) => Number((((seed * 31 + position * 7) % 100) / 100 - 0.5).toFixed(6))) };
      });
      // Google reports no token usage for embeddings
      reported.push({ promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 });
      sendJson(response, 200, { embeddings });
      return;
    }

    const generate = (body ?? {}) as GenerateRequest;
    checkRequest(generate);
    served += 1;
    const responseId = `emu-gemini-${served}`;
    const prompt = promptWords(generate);
    const candidateCount = Number(generate.generationConfig?.candidateCount ?? 1);

    const lastUser = textOf(generate.contents![generate.contents!.length - 1]);
    if (lastUser.includes(GEMINI_BLOCKED_WORD)) {
      const blocked = {
        promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
        usageMetadata: { promptTokenCount: prompt, totalTokenCount: prompt },
        modelVersion: model,
        responseId,
      };
      reported.push({ promptTokens: prompt, completionTokens: 0, cachedPromptTokens: 0 });
      if (method === 'streamGenerateContent' && url.searchParams.get('alt') === 'sse') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
      } else sendJson(response, 200, method === 'streamGenerateContent' ? [blocked] : blocked);
      return;
    }

    const { text, call } = reply(generate);
    const maxTokens = generate.generationConfig?.maxOutputTokens as number | undefined;
    let answerWords = text.split(' ').filter(Boolean);
    let finishReason = 'STOP';
    if (maxTokens !== undefined && answerWords.length > maxTokens) {
      answerWords = answerWords.slice(0, maxTokens);
      finishReason = 'MAX_TOKENS';
    }
    const completionPerCandidate = call ? 1 + Object.keys(call.args).length : answerWords.length;
    const completion = completionPerCandidate * candidateCount;
    const usageMetadata = {
      promptTokenCount: prompt,
      candidatesTokenCount: completion,
      totalTokenCount: prompt + completion,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    };
    reported.push({ promptTokens: prompt, completionTokens: completion, cachedPromptTokens: 0 });
    const candidate = (index: number, parts: Part[], finish?: string) => {
      const entry: Record<string, unknown> = { content: { parts, role: 'model' } };
      if (finish) entry.finishReason = finish;
      // Google leaves out an index of 0 (a proto default)
      if (index > 0) entry.index = index;
      return entry;
    };
    const fullParts: Part[] = call ? [{ functionCall: { name: call.name, args: call.args } }] : [{ text: answerWords.join(' ') }];

    if (method === 'generateContent') {
      sendJson(response, 200, {
        candidates: Array.from({ length: candidateCount }, (_, index) => candidate(index, fullParts, finishReason)),
        usageMetadata,
        modelVersion: model,
        responseId,
      });
      return;
    }

    // streamGenerateContent: one event per word (a function call comes whole, as Google sends it)
    const pieces: Part[][] = call ? [fullParts] : answerWords.map((word, index) => [{ text: index === 0 ? word : ` ${word}` }]);
    if (pieces.length === 0) pieces.push([{ text: '' }]);
    const events = pieces.map((parts, position) => {
      const last = position === pieces.length - 1;
      return {
        candidates: Array.from({ length: candidateCount }, (_, index) => candidate(index, parts, last ? finishReason : undefined)),
        usageMetadata: last
          ? usageMetadata
          : { promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: usageMetadata.promptTokensDetails },
        modelVersion: model,
        responseId,
      };
    });
    if (url.searchParams.get('alt') !== 'sse') {
      sendJson(response, 200, events);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of events) {
      if (response.destroyed) return;
      response.write(`data: ${JSON.stringify(event)}\r\n\r\n`);
      // one write per event, each on its own turn of the loop, so the client sees a real stream
      await new Promise((resolve) => (options.wordDelayMs ? setTimeout(resolve, options.wordDelayMs) : setImmediate(resolve)));
    }
    response.end();
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (error instanceof GoogleError) sendJson(response, error.code, error.body());
      else
        sendJson(response, 500, {
          error: {
            code: 500,
            message:
              'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
            status: 'INTERNAL',
          },
        });
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    requests,
    reported,
  };
}
