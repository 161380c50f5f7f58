// A loopback upstream speaking AWS Bedrock's Converse and ConverseStream APIs
// exactly: POST /model/{modelId}/converse answered as JSON, POST
// /model/{modelId}/converse-stream as AWS's binary event stream
// (application/vnd.amazon.eventstream, encoded with Smithy's codec), errors as
// `{"message"}` with the x-amzn-ErrorType header. Every call's SigV4 signature
// is verified by signing the received request again with the key's secret
// (the same maintained signer the adaptor uses) and comparing.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
//
// Conventions (per request, so one emulator serves many tests):
// - Keys: BEDROCK_ACCESS_KEY with BEDROCK_SECRET_KEY signs good calls; a call
//   signed with another secret → 403 InvalidSignatureException ("The request
//   signature we calculated does not match..."); an unknown access key → 403
//   UnrecognizedClientException; a signature older than 5 minutes → 403
//   InvalidSignatureException "Signature expired". A bearer token equal to
//   BEDROCK_API_KEY (a Bedrock API key) answers too; any other bearer → 403.
// - The body is checked as Converse checks it: messages non-empty, first turn
//   user, roles alternating, every content block one known member, text
//   non-empty, a toolResult answering a toolUse of the turn before, toolConfig
//   present when toolUse/toolResult blocks are, `additionalModelRequestFields`
//   `top_k` only for Anthropic models, no unknown top-level field → 400
//   ValidationException otherwise.
// - The answer is "Hello from Bedrock, you said: <last user text>" (or "...the
//   tool said: <its text>" after a tool result), streamed one word per
//   contentBlockDelta. A tool named in the last user text (or toolChoice `any`
//   or `tool`) is called instead, its required string properties filled with
//   the user's text; streamed, its input comes in fragments.
// - Usage: prompt tokens = words of the system text and every text and tool
//   result; completion = words of the answer (or of the tool input's JSON).
//   `[cache_read:N]` / `[cache_write:N]` in the prompt move N of the prompt
//   tokens from inputTokens into cacheReadInputTokens / cacheWriteInputTokens.
// - `maxTokens` below the answer's length cuts it (stopReason max_tokens).
// - `[throttle]` in the last user text → 429 ThrottlingException;
//   `[stream_error]` makes a stream send a throttlingException frame after
//   its first word.
// - Claude's Messages flavour: POST /model/{modelId}/invoke answers
//   Anthropic's Messages JSON, /invoke-with-response-stream the same answer
//   as `chunk` frames whose `bytes` are base64 of Anthropic's stream events
//   (message_start ... message_stop, the last with Bedrock's invocation
//   metrics). The body must carry `anthropic_version: "bedrock-2023-05-31"`,
//   `max_tokens` and messages, and no `model` or `stream` (400 otherwise);
//   the model must be an Anthropic one. Same answer text, usage and markers
//   as above; `[cut]` makes a stream break off inside the frame after its
//   first word (half a frame, then the socket closed).
// - Embeddings through /invoke: Titan Text Embeddings v2 (`{inputText,
//   dimensions?, normalize?}` → `{embedding, inputTextTokenCount}`, one text a
//   call, dimensions 256, 512 or 1024) and Cohere Embed (`{texts, input_type}`
//   → `{embeddings, id, response_type, texts}`, no token count; at most 96
//   texts; input_type required). Vectors are made from the text's characters;
//   a word is a token.
// - Rerank (the Agents for Amazon Bedrock runtime): POST /rerank, signed like
//   the rest, with one TEXT query, INLINE TEXT sources and a
//   BEDROCK_RERANKING_MODEL configuration naming a rerank model's
//   foundation-model ARN in the signature's region (400 ValidationException
//   otherwise). A source's relevanceScore is the share of the query's words
//   it holds; the answer is `{results: [{index, relevanceScore}]}`, best
//   first, numberOfResults of them. `queries` counts the billed queries (one
//   per 100 sources), one entry per answered call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

export const BEDROCK_ACCESS_KEY = 'AKIAEMULATOR7EXAMPLE';
export const BEDROCK_SECRET_KEY = 'emulator/Secret+Key/7EXAMPLEKEY';
export const BEDROCK_API_KEY = 'ABSKZW11bGF0b3ItYmVkcm9jay1rZXk=';
export const BEDROCK_REGION = 'us-east-1';

export const BEDROCK_CHANNELS: EmulatedChannel[] = [
  {
    type: 33,
    key: `${BEDROCK_ACCESS_KEY}|${BEDROCK_SECRET_KEY}|${BEDROCK_REGION}`,
    deadKey: `${BEDROCK_ACCESS_KEY}|not-the-secret|${BEDROCK_REGION}`,
    baseUrl: (emulator) => emulator.baseUrl,
    other: '',
    chatModel: 'claude-3-5-haiku-20241022',
  },
  {
    type: 33,
    key: `${BEDROCK_API_KEY}|${BEDROCK_REGION}`,
    deadKey: 'ABSKbm90LWEta2V5',
    baseUrl: (emulator) => emulator.baseUrl,
    other: BEDROCK_REGION,
    chatModel: 'claude-3-5-haiku-20241022',
  },
];

export interface BedrockReportedUsage extends ReportedUsage {
  cacheCreationTokens: number;
}

export interface BedrockEmulator extends ProtocolEmulator {
  reported: BedrockReportedUsage[];
  /** The queries Bedrock bills per answered rerank (a query per 100 documents). */
  queries: number[];
}

export interface BedrockEmulatorOptions {
  /** Keep every request and usage (the default); the benchmark turns it off. */
  record?: boolean;
  /** Milliseconds before each streamed word. */
  wordDelayMs?: number;
  /**
   * How old a signature may be, in seconds (AWS's 300 by default): the
   * benchmark's direct row sends one pre-signed request over and over.
   */
  signatureWindowSeconds?: number;
}

type Block = Record<string, unknown>;
interface Turn {
  role?: string;
  content?: Block[];
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  const text = JSON.stringify({ message });
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': 'emulator-request',
  });
  response.end(text);
}

function frame(kind: 'event' | 'exception', name: string, payload: unknown): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        [kind === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: name },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: kind },
      },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

// ---- the signature ----

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;
const AWS_SIGNATURE_WINDOW_SECONDS = 300;

/** Why a SigV4-signed request is refused (type and AWS's words), or undefined when its signature is right. */
async function signatureProblem(request: IncomingMessage, raw: string, windowSeconds: number): Promise<[string, string] | undefined> {
  const match = AUTHORIZATION.exec(String(request.headers.authorization ?? ''));
  if (!match) return ['IncompleteSignatureException', 'Authorization header requires Credential, SignedHeaders and Signature parameters.'];
  const [, accessKey, day, region, service, signedHeaders, signature] = match;
  if (accessKey !== BEDROCK_ACCESS_KEY) return ['UnrecognizedClientException', 'The security token included in the request is invalid.'];
  if (service !== 'bedrock') return ['InvalidSignatureException', `Credential should be scoped to correct service: 'bedrock'.`];
  const stamp = String(request.headers['x-amz-date'] ?? '');
  const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
  if (!signedAt || !stamp.startsWith(day))
    return ['IncompleteSignatureException', 'Date must be in ISO-8601 basic format and match the credential scope.'];
  const date = new Date(Date.UTC(+signedAt[1], +signedAt[2] - 1, +signedAt[3], +signedAt[4], +signedAt[5], +signedAt[6]));
  if (Math.abs(Date.now() - date.getTime()) > windowSeconds * 1000)
    return ['InvalidSignatureException', `Signature expired: ${stamp} is now earlier than the allowed window.`];
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    // the payload hash is computed again from the body that came, never taken from the header
    if (name === 'x-amz-content-sha256') continue;
    const value = request.headers[name];
    if (value === undefined)
      return [
        'InvalidSignatureException',
        `The request signature we calculated does not match the signature you provided: header ${name} is signed but absent.`,
      ];
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  if (!('host' in headers)) return ['InvalidSignatureException', 'The host header must be signed.'];
  const [path, query = ''] = (request.url ?? '/').split('?');
  const sessionToken = request.headers['x-amz-security-token'];
  const signer = new SignatureV4({
    service,
    region,
    credentials: {
      accessKeyId: accessKey,
      secretAccessKey: BEDROCK_SECRET_KEY,
      ...(typeof sessionToken === 'string' ? { sessionToken } : {}),
    },
    sha256: Sha256,
  });
  const [hostname, port] = headers.host.split(':');
  const again = await signer.sign(
    {
      method: request.method ?? 'POST',
      protocol: 'http:',
      hostname,
      ...(port ? { port: Number(port) } : {}),
      path,
      query: Object.fromEntries(new URLSearchParams(query)),
      headers,
      body: raw,
    },
    { signingDate: date },
  );
  const expected = /Signature=([0-9a-f]{64})$/.exec(again.headers.authorization ?? '')?.[1];
  if (expected !== signature) {
    return [
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    ];
  }
  return undefined;
}

/** Why a call is refused (a bearer that is not the API key, or a wrong SigV4 signature), or undefined when it may go on. */
async function callerProblem(request: IncomingMessage, raw: string, windowSeconds: number): Promise<[string, string] | undefined> {
  const authorization = String(request.headers.authorization ?? '');
  if (!authorization.startsWith('Bearer ')) return signatureProblem(request, raw, windowSeconds);
  return authorization.slice('Bearer '.length) === BEDROCK_API_KEY
    ? undefined
    : ['UnrecognizedClientException', 'The security token included in the request is invalid.'];
}

// ---- rerank (Agents for Amazon Bedrock runtime) ----

const RERANK_MODELS = new Set(['amazon.rerank-v1:0', 'cohere.rerank-v3-5:0']);
const scoreWords = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** Answers a Rerank call; the queries billed, or undefined when it was refused. */
function rerankAnswer(response: ServerResponse, body: unknown): number | undefined {
  const refuse = (message: string) => void sendError(response, 400, 'ValidationException', message);
  if (!isObject(body)) return refuse('Malformed input request, please reformat your input and try again.');
  for (const field of Object.keys(body))
    if (!['queries', 'sources', 'rerankingConfiguration', 'nextToken'].includes(field)) return refuse(`Unknown field: ${field}`);
  const queries = body.queries;
  const query = Array.isArray(queries) && queries.length === 1 && isObject(queries[0]) ? queries[0] : undefined;
  if (
    !query ||
    query.type !== 'TEXT' ||
    !isObject(query.textQuery) ||
    typeof query.textQuery.text !== 'string' ||
    query.textQuery.text === ''
  )
    return refuse(
      "1 validation error detected: Value at 'queries' failed to satisfy constraint: one TEXT query with a textQuery is required",
    );
  const sources = Array.isArray(body.sources) ? body.sources : [];
  if (sources.length === 0 || sources.length > 1000)
    return refuse(
      "1 validation error detected: Value at 'sources' failed to satisfy constraint: Member must have length between 1 and 1000",
    );
  const texts: string[] = [];
  for (const source of sources) {
    const inline =
      isObject(source) && source.type === 'INLINE' && isObject(source.inlineDocumentSource) ? source.inlineDocumentSource : undefined;
    if (!inline || inline.type !== 'TEXT' || !isObject(inline.textDocument) || typeof inline.textDocument.text !== 'string')
      return refuse('Malformed input request: each source must be INLINE with a TEXT textDocument.');
    texts.push(inline.textDocument.text);
  }
  const configuration = isObject(body.rerankingConfiguration) ? body.rerankingConfiguration : {};
  const bedrockConfiguration = isObject(configuration.bedrockRerankingConfiguration) ? configuration.bedrockRerankingConfiguration : {};
  const modelArn = isObject(bedrockConfiguration.modelConfiguration) ? bedrockConfiguration.modelConfiguration.modelArn : undefined;
  const arn = typeof modelArn === 'string' ? /^arn:aws:bedrock:([a-z0-9-]+)::foundation-model\/(.+)$/.exec(modelArn) : null;
  if (configuration.type !== 'BEDROCK_RERANKING_MODEL' || !arn)
    return refuse('Malformed input request: rerankingConfiguration needs type BEDROCK_RERANKING_MODEL and a modelArn.');
  if (arn[1] !== BEDROCK_REGION || !RERANK_MODELS.has(arn[2]))
    return refuse(`The provided model ARN ${String(modelArn)} is not a reranking model in this region.`);
  const wanted = bedrockConfiguration.numberOfResults ?? texts.length;
  if (typeof wanted !== 'number' || !Number.isInteger(wanted) || wanted < 1 || wanted > 1000)
    return refuse("Value at 'numberOfResults' failed to satisfy constraint: Member must be between 1 and 1000");
  const asked = new Set(scoreWords(query.textQuery.text));
  const results = texts
    .map((text, index) => {
      const held = new Set(scoreWords(text));
      const shared = [...asked].filter((word) => held.has(word)).length;
      return { index, relevanceScore: Math.round((shared / Math.max(1, asked.size)) * 1e6) / 1e6 };
    })
    .sort((first, second) => second.relevanceScore - first.relevanceScore || first.index - second.index)
    .slice(0, wanted);
  const text = JSON.stringify({ results });
  response.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': 'emulator-request',
  });
  response.end(text);
  return Math.ceil(texts.length / 100);
}

// ---- the body ----

const BLOCK_MEMBERS = new Set([
  'text',
  'image',
  'document',
  'video',
  'toolUse',
  'toolResult',
  'guardContent',
  'cachePoint',
  'reasoningContent',
]);
const TOP_LEVEL = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);

function blockText(block: Block): string {
  if (typeof block.text === 'string') return block.text;
  if (isObject(block.toolResult) && Array.isArray(block.toolResult.content))
    return (block.toolResult.content as Block[]).map(blockText).join(' ');
  if (block.json !== undefined) return JSON.stringify(block.json);
  return '';
}

/** The first thing wrong with a Converse body, in AWS's words; undefined when it is well formed. */
function invalid(body: Record<string, unknown>, modelId: string): string | undefined {
  for (const field of Object.keys(body))
    if (!TOP_LEVEL.has(field))
      return `Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`;
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  const turns = body.messages as Turn[];
  let usesTools = false;
  for (let index = 0; index < turns.length; index += 1) {
    const turn = turns[index];
    if (!isObject(turn) || (turn.role !== 'user' && turn.role !== 'assistant'))
      return `1 validation error detected: Value at 'messages.${index + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`;
    if (index === 0 && turn.role !== 'user')
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    if (index > 0 && turns[index - 1].role === turn.role)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    if (!Array.isArray(turn.content) || turn.content.length === 0)
      return `The content field in the Message object at messages.${index}.content is empty. Add a ContentBlock object to the content field and try again.`;
    for (const block of turn.content) {
      const members = isObject(block) ? Object.keys(block) : [];
      if (members.length !== 1 || !BLOCK_MEMBERS.has(members[0]))
        return `Malformed input request: messages.${index}.content: each ContentBlock must have exactly one member.`;
      if ('text' in block && (typeof block.text !== 'string' || block.text === ''))
        return `The text field in the ContentBlock object at messages.${index}.content is blank. Add text to the text field, and try again.`;
      if ('toolUse' in block || 'toolResult' in block) usesTools = true;
      if (isObject(block.toolResult)) {
        const previous = index > 0 ? (turns[index - 1].content ?? []) : [];
        const id = block.toolResult.toolUseId;
        if (!previous.some((used) => isObject(used.toolUse) && used.toolUse.toolUseId === id))
          return `The toolUseId ${String(id)} in the toolResult at messages.${index} does not match a toolUse of the previous turn.`;
      }
      if (isObject(block.image)) {
        const source = block.image.source;
        if (!['png', 'jpeg', 'gif', 'webp'].includes(String(block.image.format)) || !isObject(source) || typeof source.bytes !== 'string')
          return `Malformed input request: messages.${index}: invalid image block.`;
      }
    }
  }
  if (
    body.system !== undefined &&
    (!Array.isArray(body.system) ||
      !(body.system as unknown[]).every((block) => isObject(block) && (typeof block.text === 'string' || isObject(block.cachePoint))))
  ) {
    return 'Malformed input request: system: each SystemContentBlock must be text or a cachePoint.';
  }
  if (usesTools && !isObject(body.toolConfig))
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  if (body.toolConfig !== undefined) {
    const tools = isObject(body.toolConfig) ? body.toolConfig.tools : undefined;
    if (
      !Array.isArray(tools) ||
      !tools.every(
        (tool) =>
          isObject(tool) && isObject(tool.toolSpec) && typeof tool.toolSpec.name === 'string' && isObject(tool.toolSpec.inputSchema),
      )
    )
      return 'Malformed input request: toolConfig.tools: each Tool must have a toolSpec with a name and an inputSchema.';
  }
  const inference = body.inferenceConfig;
  if (inference !== undefined) {
    if (!isObject(inference)) return 'Malformed input request: inferenceConfig must be an object.';
    for (const [field, value] of Object.entries(inference)) {
      if (
        field === 'stopSequences'
          ? !Array.isArray(value)
          : !['maxTokens', 'temperature', 'topP'].includes(field) || typeof value !== 'number'
      ) {
        return `Malformed input request: #/inferenceConfig: extraneous or invalid key [${field}].`;
      }
    }
  }
  const extra = body.additionalModelRequestFields;
  if (extra !== undefined && (!isObject(extra) || (Object.keys(extra).length > 0 && !modelId.includes('anthropic.')))) {
    return `Malformed input request: #: extraneous key [${Object.keys(isObject(extra) ? extra : {}).join(', ')}] is not permitted, please reformat your input and try again.`;
  }
  return undefined;
}

interface Tool {
  toolSpec: { name: string; inputSchema: { json?: { properties?: Record<string, { type?: string }>; required?: string[] } } };
}

function chosenTool(body: Record<string, unknown>, lastText: string): Tool | undefined {
  const config = isObject(body.toolConfig) ? body.toolConfig : {};
  const tools = (Array.isArray(config.tools) ? config.tools : []) as Tool[];
  if (tools.length === 0) return undefined;
  const choice = isObject(config.toolChoice) ? config.toolChoice : { auto: {} };
  if (isObject(choice.tool)) return tools.find((tool) => tool.toolSpec.name === (choice.tool as { name?: string }).name);
  return tools.find((tool) => lastText.includes(tool.toolSpec.name)) ?? (isObject(choice.any) ? tools[0] : undefined);
}

function marker(text: string, name: string): number {
  const match = new RegExp(`\\[${name}:(\\d+)\\]`).exec(text);
  return match ? Number(match[1]) : 0;
}

// ---- Claude's Messages flavour (InvokeModel) ----

/** A chunk frame of InvokeModelWithResponseStream: one Anthropic stream event, base64 in `bytes`. */
function chunkFrame(event: Record<string, unknown>): Buffer {
  return frame('event', 'chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcd' });
}

/** A Messages block's text (text, tool results, tool inputs), for counting. */
function messagesText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .map((block) =>
      typeof block.text === 'string'
        ? block.text
        : block.type === 'tool_result'
          ? messagesText(block.content)
          : block.type === 'tool_use'
            ? JSON.stringify(block.input ?? {})
            : '',
    )
    .join(' ');
}

/** The first thing InvokeModel would refuse in a Claude Messages body; undefined when it takes it. */
function invalidInvoke(body: Record<string, unknown>, modelId: string): string | undefined {
  if (!modelId.includes('anthropic.'))
    return 'Malformed input request: #: extraneous key [anthropic_version] is not permitted, please reformat your input and try again.';
  for (const field of ['model', 'stream'])
    if (field in body)
      return `Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`;
  if (body.anthropic_version !== 'bedrock-2023-05-31')
    return 'Malformed input request: #: required key [anthropic_version] not found or invalid, please reformat your input and try again.';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return 'Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return 'Malformed input request: #: required key [messages] not found, please reformat your input and try again.';
  return undefined;
}

/** A unit vector made from a text's characters: the same text, the same vector. */
function vectorOf(text: string, dimensions: number): number[] {
  const vector = Array.from(
    { length: dimensions },
    (_, index) => ((text.charCodeAt(index % Math.max(1, text.length)) || 1) * (index + 1)) % 97,
  );
  const length = Math.hypot(...vector) || 1;
  return vector.map((value) => value / length);
}

/** Answers an embedding model's InvokeModel; the usage reported (Titan's tokens; Cohere's none), or undefined when refused. */
function embedAnswer(
  response: ServerResponse,
  body: Record<string, unknown>,
  modelId: string,
  serial: number,
): BedrockReportedUsage | undefined {
  const refuse = (message: string) => void sendError(response, 400, 'ValidationException', message);
  let answer: Record<string, unknown>;
  let tokens = 0;
  if (modelId.includes('titan-embed')) {
    for (const field of Object.keys(body))
      if (!['inputText', 'dimensions', 'normalize', 'embeddingTypes'].includes(field))
        return refuse(`Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`);
    if (typeof body.inputText !== 'string' || body.inputText === '')
      return refuse('Malformed input request: #/inputText: expected minLength: 1, actual: 0, please reformat your input and try again.');
    const dimensions = body.dimensions ?? 1024;
    if (dimensions !== 256 && dimensions !== 512 && dimensions !== 1024)
      return refuse('Malformed input request: #/dimensions: 300 is not a valid enum value, please reformat your input and try again.');
    tokens = Math.max(1, words(body.inputText).length);
    answer = { embedding: vectorOf(body.inputText, dimensions), embeddingsByType: undefined, inputTextTokenCount: tokens };
  } else {
    for (const field of Object.keys(body))
      if (!['texts', 'input_type', 'truncate', 'embedding_types', 'images'].includes(field))
        return refuse(`Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`);
    const texts = body.texts;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || !texts.every((text) => typeof text === 'string'))
      return refuse('Malformed input request: #/texts: expected 1 to 96 strings, please reformat your input and try again.');
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(String(body.input_type)))
      return refuse('Malformed input request: #: required key [input_type] not found, please reformat your input and try again.');
    answer = { embeddings: texts.map((text) => vectorOf(text, 1024)), id: `emb-emu${serial}`, response_type: 'embeddings_floats', texts };
  }
  const text = JSON.stringify(answer);
  response.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': 'emulator-request',
  });
  response.end(text);
  return { promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0, cacheCreationTokens: 0 };
}

/** Answers an InvokeModel call (whole or streamed); the usage it reported, or undefined when it refused or broke off. */
async function invokeAnswer(
  response: ServerResponse,
  body: Record<string, unknown>,
  modelId: string,
  streaming: boolean,
  serial: number,
  delayMs: number,
): Promise<BedrockReportedUsage | undefined> {
  if (!streaming && (modelId.includes('titan-embed') || modelId.includes('cohere.embed')))
    return embedAnswer(response, body, modelId, serial);
  const problem = invalidInvoke(body, modelId);
  if (problem) return void sendError(response, 400, 'ValidationException', problem);
  const turns = body.messages as Array<{ role?: string; content?: unknown }>;
  const promptText = [messagesText(body.system), ...turns.map((turn) => messagesText(turn.content))].join(' ');
  const promptTokens = Math.max(1, words(promptText).length);
  const cacheRead = Math.min(promptTokens, marker(promptText, 'cache_read'));
  const cacheWrite = Math.min(promptTokens - cacheRead, marker(promptText, 'cache_write'));
  const last = turns[turns.length - 1];
  const lastText = last?.role === 'user' ? messagesText(last.content) : '';
  if (lastText.includes('[throttle]'))
    return void sendError(response, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
  let answerWords = words(`Hello from Bedrock, you said: ${lastText}`);
  let stopReason = 'end_turn';
  if (answerWords.length > (body.max_tokens as number)) {
    answerWords = answerWords.slice(0, body.max_tokens as number);
    stopReason = 'max_tokens';
  }
  const input = {
    input_tokens: promptTokens - cacheRead - cacheWrite,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
  const report: BedrockReportedUsage = {
    promptTokens,
    completionTokens: answerWords.length,
    cachedPromptTokens: cacheRead,
    cacheCreationTokens: cacheWrite,
  };
  // Bedrock's Claude names itself by Anthropic's model name in its answers
  const model = modelId.replace(/^(?:[a-z]+\.)?anthropic\./, '').replace(/-v\d+(?::\d+)?$/, '');
  const id = `msg_bdrk_emu${serial}`;
  if (!streaming) {
    const text = JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: answerWords.join(' ') }],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { ...input, output_tokens: answerWords.length },
    });
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': 'emulator-request',
    });
    response.end(text);
    return report;
  }
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'emulator-request' });
  let gone = false;
  response.on('close', () => {
    gone = !response.writableFinished;
  });
  const send = (event: Record<string, unknown>) => response.write(chunkFrame(event));
  send({
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...input, output_tokens: 1 },
    },
  });
  send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  for (let index = 0; index < answerWords.length; index += 1) {
    if (delayMs > 0) await sleep(delayMs);
    if (gone) return undefined;
    send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: (index === 0 ? '' : ' ') + answerWords[index] } });
    if (index === 0 && lastText.includes('[stream_error]')) {
      response.write(frame('exception', 'throttlingException', { message: 'Too many requests, please wait before trying again.' }));
      response.end();
      return undefined;
    }
    if (index === 0 && lastText.includes('[cut]')) {
      const next = chunkFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' more' } });
      response.write(next.subarray(0, Math.floor(next.length / 2)));
      await sleep(20);
      response.destroy();
      return undefined;
    }
  }
  send({ type: 'content_block_stop', index: 0 });
  send({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: answerWords.length } });
  send({
    type: 'message_stop',
    'amazon-bedrock-invocationMetrics': {
      inputTokenCount: input.input_tokens,
      outputTokenCount: answerWords.length,
      invocationLatency: 12,
      firstByteLatency: 5,
    },
  });
  response.end();
  return report;
}

export async function startBedrockEmulator(options: BedrockEmulatorOptions = {}): Promise<BedrockEmulator> {
  const record = options.record ?? true;
  const requests: EmulatedRequest[] = [];
  const reported: BedrockReportedUsage[] = [];
  const queries: number[] = [];
  let serial = 0;

  const server: Server = createServer(
    (request: IncomingMessage, response: ServerResponse) =>
      void (async () => {
        const { text: raw, body } = await readRequestBody(request);
        if (record) requests.push({ method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body, raw });

        if ((request.url ?? '/').split('?')[0] === '/rerank' && request.method === 'POST') {
          const problem = await callerProblem(request, raw, options.signatureWindowSeconds ?? AWS_SIGNATURE_WINDOW_SECONDS);
          if (problem) return sendError(response, 403, problem[0], problem[1]);
          const answered = rerankAnswer(response, body);
          if (answered !== undefined && record) queries.push(answered);
          return;
        }
        const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(
          (request.url ?? '/').split('?')[0],
        );
        if (request.method !== 'POST' || !route) return sendError(response, 404, 'UnknownOperationException', 'Unknown operation');
        const modelId = decodeURIComponent(route[1]);
        const streaming = route[2] === 'converse-stream';

        const refused = await callerProblem(request, raw, options.signatureWindowSeconds ?? AWS_SIGNATURE_WINDOW_SECONDS);
        if (refused) return sendError(response, 403, refused[0], refused[1]);
        if (!isObject(body))
          return sendError(response, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
        if (route[2].startsWith('invoke')) {
          serial += 1;
          const report = await invokeAnswer(
            response,
            body,
            modelId,
            route[2] === 'invoke-with-response-stream',
            serial,
            options.wordDelayMs ?? 0,
          );
          if (report && record) reported.push(report);
          return;
        }
        const problem = invalid(body, modelId);
        if (problem) return sendError(response, 400, 'ValidationException', problem);

        const turns = body.messages as Turn[];
        const systemText = ((body.system ?? []) as Block[]).map(blockText).join(' ');
        const promptText = [systemText, ...turns.flatMap((turn) => (turn.content ?? []).map(blockText))].join(' ');
        const promptTokens = Math.max(1, words(promptText).length);
        const cacheRead = Math.min(promptTokens, marker(promptText, 'cache_read'));
        const cacheWrite = Math.min(promptTokens - cacheRead, marker(promptText, 'cache_write'));
        const last = turns[turns.length - 1];
        const lastBlocks = last.role === 'user' ? (last.content ?? []) : [];
        const toolResults = lastBlocks.filter((block) => isObject(block.toolResult));
        const lastText = lastBlocks
          .filter((block) => typeof block.text === 'string')
          .map(blockText)
          .join(' ');
        if (lastText.includes('[throttle]'))
          return sendError(response, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
        const tool = toolResults.length === 0 ? chosenTool(body, lastText) : undefined;

        serial += 1;
        const maxTokens =
          isObject(body.inferenceConfig) && typeof body.inferenceConfig.maxTokens === 'number' ? body.inferenceConfig.maxTokens : Infinity;
        let answerWords: string[] = [];
        let stopReason = 'end_turn';
        let input: Record<string, unknown> | undefined;
        let completionTokens: number;
        if (tool) {
          input = {};
          for (const name of tool.toolSpec.inputSchema.json?.required ?? []) input[name] = lastText;
          stopReason = 'tool_use';
          completionTokens = Math.max(1, words(JSON.stringify(input)).length);
        } else {
          const text =
            toolResults.length > 0
              ? `Hello from Bedrock, the tool said: ${toolResults.map(blockText).join(' ')}`
              : `Hello from Bedrock, you said: ${lastText}`;
          answerWords = words(text);
          if (answerWords.length > maxTokens) {
            answerWords = answerWords.slice(0, maxTokens);
            stopReason = 'max_tokens';
          }
          completionTokens = answerWords.length;
        }
        const usage = {
          inputTokens: promptTokens - cacheRead - cacheWrite,
          outputTokens: completionTokens,
          totalTokens: promptTokens + completionTokens,
          cacheReadInputTokens: cacheRead,
          cacheWriteInputTokens: cacheWrite,
        };
        const report: BedrockReportedUsage = {
          promptTokens,
          completionTokens,
          cachedPromptTokens: cacheRead,
          cacheCreationTokens: cacheWrite,
        };
        const toolUseId = `tooluse_emu${serial}`;

        if (!streaming) {
          if (record) reported.push(report);
          const content = tool ? [{ toolUse: { toolUseId, name: tool.toolSpec.name, input } }] : [{ text: answerWords.join(' ') }];
          const text = JSON.stringify({
            output: { message: { role: 'assistant', content } },
            stopReason,
            usage,
            metrics: { latencyMs: 1 },
          });
          response.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            'x-amzn-requestid': 'emulator-request',
          });
          return void response.end(text);
        }

        response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'emulator-request' });
        let gone = false;
        response.on('close', () => {
          gone = !response.writableFinished;
        });
        const send = (event: string, payload: Record<string, unknown>) =>
          response.write(frame('event', event, { ...payload, p: 'abcdefgh' }));
        const delayMs = options.wordDelayMs ?? 0;
        send('messageStart', { role: 'assistant' });
        if (tool) {
          send('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId, name: tool.toolSpec.name } } });
          const whole = JSON.stringify(input);
          for (let start = 0; start < whole.length; start += 12) {
            if (delayMs > 0) await sleep(delayMs);
            if (gone) return;
            send('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: whole.slice(start, start + 12) } } });
          }
        } else {
          for (let index = 0; index < answerWords.length; index += 1) {
            if (delayMs > 0) await sleep(delayMs);
            if (gone) return;
            send('contentBlockDelta', { contentBlockIndex: 0, delta: { text: (index === 0 ? '' : ' ') + answerWords[index] } });
            if (index === 0 && lastText.includes('[stream_error]')) {
              response.write(frame('exception', 'throttlingException', { message: 'Too many requests, please wait before trying again.' }));
              return void response.end();
            }
          }
        }
        send('contentBlockStop', { contentBlockIndex: 0 });
        send('messageStop', { stopReason });
        send('metadata', { usage, metrics: { latencyMs: 1 } });
        if (record) reported.push(report);
        response.end();
      })(),
  );

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported, queries };
}
