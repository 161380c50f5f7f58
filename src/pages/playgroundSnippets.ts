// The playground's current settings as code to copy (PlaygroundCopy.tsx): a
// curl command, and the same call with OpenAI's Python and TypeScript SDKs,
// against this gateway's base URL. The key is always the placeholder `sk-...`
// with the chosen key's name beside it in a comment: the console never puts a
// secret into text meant to be pasted elsewhere.
import type { ChatMessage } from '../dataProvider/relayChat';

/** What a snippet sends. */
export interface SnippetRequest {
  /** The gateway's OpenAI base URL (origin + /v1). */
  baseUrl: string;
  model: string;
  /** The system prompt (when set) and the conversation. */
  messages: ChatMessage[];
  temperature: number;
  maxTokens?: number;
  /** The comment naming the key to paste ("Key: laptop"), in the console's language; none when no key is chosen. */
  keyComment?: string;
}

export const KEY_PLACEHOLDER = 'sk-...';

/** A string literal that JSON, Python and TypeScript all read back as the same text. */
const literal = (text: string) => JSON.stringify(text);

/** A comment's text on one line (a key's name could hold a line break). */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');

/** The request body, as the relay takes it. */
function bodyOf(request: SnippetRequest): Record<string, unknown> {
  return {
    model: request.model,
    messages: request.messages,
    temperature: request.temperature,
    ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
  };
}

/** A curl command; the body between single quotes (one inside it closed, escaped and reopened). */
export function curlSnippet(request: SnippetRequest): string {
  const body = JSON.stringify(bodyOf(request), null, 2).replace(/'/g, `'\\''`);
  const command = [
    `curl ${request.baseUrl}/chat/completions`,
    '  -H "Content-Type: application/json"',
    `  -H "Authorization: Bearer ${KEY_PLACEHOLDER}"`,
    `  -d '${body}'`,
  ].join(' \\\n');
  return request.keyComment ? `# ${oneLine(request.keyComment)}\n${command}` : command;
}

/** The messages as a list literal of either language, one message a line. */
function messageLines(messages: readonly ChatMessage[], quoteKeys: boolean, indent: string): string {
  const key = (name: string) => (quoteKeys ? literal(name) : name);
  return messages
    .map((message) => `${indent}{ ${key('role')}: ${literal(message.role)}, ${key('content')}: ${literal(message.content)} },`)
    .join('\n');
}

/** The call with the openai Python SDK. */
export function pythonSnippet(request: SnippetRequest): string {
  const comment = request.keyComment ? `  # ${oneLine(request.keyComment)}` : '';
  return [
    'from openai import OpenAI',
    '',
    'client = OpenAI(',
    `    base_url=${literal(request.baseUrl)},`,
    `    api_key=${literal(KEY_PLACEHOLDER)},${comment}`,
    ')',
    '',
    'completion = client.chat.completions.create(',
    `    model=${literal(request.model)},`,
    '    messages=[',
    messageLines(request.messages, true, '        '),
    '    ],',
    `    temperature=${request.temperature},`,
    ...(request.maxTokens ? [`    max_tokens=${request.maxTokens},`] : []),
    ')',
    'print(completion.choices[0].message.content)',
    '',
  ].join('\n');
}

/** The call with the openai TypeScript SDK (an ES module: top-level await). */
export function typescriptSnippet(request: SnippetRequest): string {
  const comment = request.keyComment ? ` // ${oneLine(request.keyComment)}` : '';
  return [
    "import OpenAI from 'openai';",
    '',
    'const client = new OpenAI({',
    `  baseURL: ${literal(request.baseUrl)},`,
    `  apiKey: ${literal(KEY_PLACEHOLDER)},${comment}`,
    '});',
    '',
    'const completion = await client.chat.completions.create({',
    `  model: ${literal(request.model)},`,
    '  messages: [',
    messageLines(request.messages, false, '    '),
    '  ],',
    `  temperature: ${request.temperature},`,
    ...(request.maxTokens ? [`  max_tokens: ${request.maxTokens},`] : []),
    '});',
    'console.log(completion.choices[0].message.content);',
    '',
  ].join('\n');
}
