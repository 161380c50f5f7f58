// Requests of Claude Code, Codex and Gemini CLI (their recorded shapes in
// ../protocols/__fixtures__/clients) translated for a vendor that speaks
// another protocol and checks what it is sent: the body the upstream emulator
// received must be one that vendor takes. Web search becomes the vendor's own
// search where it has one and is left out, with a header saying so, where it
// has none; namespaces are flattened and their calls named back; what cannot
// be carried at all is refused by name instead of dropped.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../../support/emulators/anthropic';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { ProtocolEmulator } from '../../support/emulators/types';
import { DEFAULT_MODEL_MAX_OUTPUT_TOKENS } from '../../../common/options';
import { maxOutputTokensFor } from '../../../server/billing/prices';
import { FIXTURES } from '../protocols/contract';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

const CLAUDE = ANTHROPIC_CHANNELS[0];
const GPT = 'gpt-4';
const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01' };

type Json = Record<string, any>;
const fixture = (name: string): Json => JSON.parse(readFileSync(join(FIXTURES, 'clients', `${name}.json`), 'utf8')) as Json;

let harness: RelayHarness;
let anthropic: AnthropicEmulator;
let googleEmulator: ProtocolEmulator;
const GEMINI = GEMINI_CHANNELS[0];

beforeAll(async () => {
  harness = await startRelayHarness();
  anthropic = await startAnthropicEmulator();
  googleEmulator = await startGeminiEmulator();
});
afterAll(async () => {
  await harness.close();
  await anthropic.close();
  await googleEmulator.close();
});
beforeEach(async () => {
  await resetRelay(harness);
  await harness.app.ctx.options.set('ModelMaxOutputTokens', JSON.stringify(DEFAULT_MODEL_MAX_OUTPUT_TOKENS));
});

const addOpenAi = (models = GPT) => harness.addChannel({ name: 'openai', key: 'sk-good', models });
const addClaude = (fields: Json = {}) =>
  harness.addChannel({
    type: CLAUDE.type,
    name: 'claude',
    key: CLAUDE.key,
    base_url: CLAUDE.baseUrl(anthropic),
    models: CLAUDE.chatModel,
    ...fields,
  });
/** What the OpenAI emulator was sent last, parsed. */
const sentToOpenAi = () => harness.emulator.requests.at(-1)!.body as Json;
const sentToClaude = () => anthropic.requests.at(-1)!.body as Json;
const gemini = (model: string, method: string, body: unknown) =>
  fetch(`${harness.baseUrl}/v1beta/models/${model}:${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': harness.apiKey },
    body: JSON.stringify(body),
  });

/** Every `type` keyword in a schema, at any depth. */
function typeNames(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(typeNames);
  if (!schema || typeof schema !== 'object') return [];
  return Object.entries(schema).flatMap(([key, value]) => (key === 'type' && typeof value === 'string' ? [value] : typeNames(value)));
}

describe('Claude Code (Anthropic in) to an OpenAI channel', () => {
  it('keeps a system entry among the messages a system message, in its place', async () => {
    await addOpenAi();
    const body = fixture('claude-code.plan-mode-turn');
    const response = await harness.post('/v1/messages', { ...body, model: GPT }, harness.apiKey, ANTHROPIC_HEADERS);
    expect(response.status, await response.clone().text()).toBe(200);
    await response.text();
    const sent = sentToOpenAi();
    expect(sent.messages.map((message: Json) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'system', 'user']);
    expect(sent.messages[4].content).toBe(body.messages[3].content);
    expect(sent.messages[5].content).toBe('Propose the fix first; do not edit yet.');
  });

  it("sends no cache_control, a user id of at most 64 characters (its SHA-256), and max_tokens within the model's maximum", async () => {
    await addOpenAi();
    for (const name of ['claude-code.first-request', 'claude-code.plan-mode-turn']) {
      const body = fixture(name);
      const response = await harness.post('/v1/messages', { ...body, model: GPT }, harness.apiKey, ANTHROPIC_HEADERS);
      expect(response.status, await response.clone().text()).toBe(200);
      await response.text();
      const sent = sentToOpenAi();
      expect(JSON.stringify(sent), name).not.toContain('cache_control');
      // the two cached system blocks arrive as one system text
      expect(sent.messages[0]).toEqual({ role: 'system', content: body.system.map((block: Json) => block.text).join('\n\n') });
      expect(body.metadata.user_id.length).toBeGreaterThan(64);
      expect(sent.user).toBe(createHash('sha256').update(body.metadata.user_id).digest('hex'));
      expect(body.max_tokens).toBe(32000);
      // gpt-4's 8192, from the catalog
      expect(sent.max_tokens).toBe(maxOutputTokensFor(GPT, DEFAULT_MODEL_MAX_OUTPUT_TOKENS));
      expect(sent.max_tokens).toBe(8192);
    }
  });

  it("keeps a short user id as it is, and a limit under the model's maximum as the client set it", async () => {
    await addOpenAi();
    const response = await harness.post(
      '/v1/messages',
      { ...fixture('claude-code.first-request'), model: GPT, metadata: { user_id: 'dev-42' }, max_tokens: 1000, stream: false },
      harness.apiKey,
      ANTHROPIC_HEADERS,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToOpenAi()).toMatchObject({ user: 'dev-42', max_tokens: 1000 });
  });

  it("refuses Anthropic's server tools that have no equivalent by name, sending nothing", async () => {
    await addOpenAi();
    const before = harness.emulator.requests.length;
    const body = fixture('claude-code.first-request');
    const tools = [...body.tools, { type: 'bash_20250124', name: 'bash' }];
    const response = await harness.post('/v1/messages', { ...body, model: GPT, tools, stream: false }, harness.apiKey, ANTHROPIC_HEADERS);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('"bash_20250124"') },
    });
    expect(harness.emulator.requests.length).toBe(before);
  });

  it("leaves Anthropic's web search out for a vendor without search, saying so in a header and the log; a group may refuse instead", async () => {
    await addOpenAi();
    const body = fixture('claude-code.first-request');
    const tools = [...body.tools, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }];
    const response = await harness.post('/v1/messages', { ...body, model: GPT, tools, stream: false }, harness.apiKey, ANTHROPIC_HEADERS);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-switchboard-dropped-tools')).toBe('web_search');
    expect(sentToOpenAi()).not.toHaveProperty('web_search_options');
    expect(sentToOpenAi().tools.map((tool: Json) => tool.function.name)).toEqual(body.tools.map((tool: Json) => tool.name));
    await harness.settled();
    const log = await harness.app.ctx.db
      .selectFrom('logs')
      .select('content')
      .where('type', '=', 2)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(log.content).toContain("left out (the channel's vendor has none): web_search");

    await harness.app.ctx.options.set('ToolRefusalGroups', 'vip,default');
    const before = harness.emulator.requests.length;
    const refused = await harness.post('/v1/messages', { ...body, model: GPT, tools, stream: false }, harness.apiKey, ANTHROPIC_HEADERS);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ type: 'error', error: { message: expect.stringContaining('"web_search"') } });
    expect(harness.emulator.requests.length).toBe(before);
    await harness.app.ctx.options.set('ToolRefusalGroups', '');
  });
});

describe('Gemini CLI (Gemini in) to an OpenAI channel', () => {
  it('sends parametersJsonSchema as JSON Schema, type names in lower case', async () => {
    await addOpenAi();
    const body = fixture('gemini-cli.tool-turn');
    const response = await gemini(GPT, 'generateContent', body);
    expect(response.status, await response.clone().text()).toBe(200);
    const tools = sentToOpenAi().tools as Json[];
    expect(tools.map((tool) => tool.function.name)).toEqual(['list_directory', 'read_file']);
    expect(tools[0].function.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The absolute path to the directory to list' },
        ignore: { type: 'array', items: { type: 'string' }, description: 'Glob patterns to ignore' },
      },
      required: ['path'],
    });
    expect(typeNames(tools[1].function.parameters)).toEqual(['object', 'string', 'number', 'number']);
  });

  it('sends responseJsonSchema as a JSON Schema response_format, type names in lower case, enums untouched', async () => {
    await addOpenAi();
    const body = fixture('gemini-cli.next-speaker');
    const response = await gemini(GPT, 'generateContent', body);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToOpenAi().response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: {
          type: 'object',
          properties: {
            reasoning: { type: 'string', description: 'Brief explanation justifying the next_speaker choice.' },
            next_speaker: { type: 'string', enum: ['user', 'model'] },
          },
          required: ['reasoning', 'next_speaker'],
        },
      },
    });
  });

  it("refuses Google's own tools that have no equivalent by name, sending nothing", async () => {
    await addOpenAi();
    const before = harness.emulator.requests.length;
    const body = fixture('gemini-cli.tool-turn');
    const response = await gemini(GPT, 'generateContent', { ...body, tools: [...body.tools, { codeExecution: {} }] });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('"codeExecution"') },
    });
    expect(harness.emulator.requests.length).toBe(before);
  });

  it('gives Google Search grounding to Anthropic as its web search tool, and leaves it out for a vendor without search', async () => {
    const body = fixture('gemini-cli.tool-turn');
    const tools = [...body.tools, { googleSearch: {} }];
    await addClaude();
    const toClaude = await gemini(CLAUDE.chatModel, 'generateContent', { ...body, tools });
    expect(toClaude.status, await toClaude.clone().text()).toBe(200);
    expect(toClaude.headers.get('x-switchboard-dropped-tools')).toBeNull();
    expect(sentToClaude().tools.at(-1)).toEqual({ type: 'web_search_20250305', name: 'web_search' });
    await addOpenAi();
    const toOpenAi = await gemini(GPT, 'generateContent', { ...body, tools });
    expect(toOpenAi.status, await toOpenAi.clone().text()).toBe(200);
    expect(toOpenAi.headers.get('x-switchboard-dropped-tools')).toBe('web_search');
  });
});

/** The function_call items of a Responses answer, whole or streamed (from its response.completed event). */
async function responseCalls(response: Response, stream: boolean): Promise<Json[]> {
  const text = await response.text();
  const output = stream
    ? (text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as Json)
        .find((event) => event.type === 'response.completed')?.response.output as Json[])
    : ((JSON.parse(text) as Json).output as Json[]);
  return output.filter((item) => item.type === 'function_call');
}

describe('Codex and the Agents SDK (Responses in) to channels that do not serve Responses', () => {
  it("stock Codex works: its namespace's tools flattened, web_search as Anthropic's web search, streamed and not", async () => {
    await addClaude();
    for (const stream of [true, false]) {
      const response = await harness.post('/v1/responses', { ...fixture('codex.builtin-tools'), model: CLAUDE.chatModel, stream });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('x-switchboard-dropped-tools')).toBeNull();
      await response.text();
      const sent = sentToClaude();
      expect(sent.tools.map((tool: Json) => tool.name)).toEqual(['shell', 'mcp__docs__search_docs', 'web_search']);
      expect(sent.tools[1].input_schema).toEqual(fixture('codex.builtin-tools').tools[2].tools[0].parameters);
      expect(sent.tools[2]).toEqual({ type: 'web_search_20250305', name: 'web_search' });
    }
  });

  it("names a namespace's function back as the client declared it, and takes the call's namespace back in the next turn", async () => {
    await addClaude();
    const body = fixture('codex.builtin-tools');
    const ask = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'use mcp__docs__search_docs for keep-alive' }] };
    for (const stream of [false, true]) {
      const response = await harness.post('/v1/responses', { ...body, input: [ask], model: CLAUDE.chatModel, stream });
      expect(response.status).toBe(200);
      const calls = await responseCalls(response, stream);
      expect(calls).toEqual([expect.objectContaining({ type: 'function_call', name: 'search_docs', namespace: 'mcp__docs' })]);
      // the call and its output sent back: Anthropic sees the flat name on the tool_use
      const next = await harness.post('/v1/responses', {
        ...body,
        model: CLAUDE.chatModel,
        stream: false,
        input: [
          ask,
          { type: 'function_call', call_id: calls[0].call_id, name: 'search_docs', namespace: 'mcp__docs', arguments: calls[0].arguments },
          { type: 'function_call_output', call_id: calls[0].call_id, output: 'undici 7.16' },
        ],
      });
      expect(next.status, await next.clone().text()).toBe(200);
      const assistant = (sentToClaude().messages as Json[]).find((message) => message.role === 'assistant')!;
      expect(assistant.content.find((block: Json) => block.type === 'tool_use').name).toBe('mcp__docs__search_docs');
    }
  });

  it('gives web_search to a Gemini channel as Google Search grounding, beside the flattened function declarations', async () => {
    await harness.addChannel({
      type: GEMINI.type,
      name: 'gemini',
      key: GEMINI.key,
      base_url: GEMINI.baseUrl(googleEmulator),
      models: GEMINI.chatModel,
      other: GEMINI.other,
    });
    for (const stream of [true, false]) {
      const response = await harness.post('/v1/responses', { ...fixture('codex.builtin-tools'), model: GEMINI.chatModel, stream });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('x-switchboard-dropped-tools')).toBeNull();
      await response.text();
      const sent = googleEmulator.requests.at(-1)!.body as Json;
      expect(sent.tools).toEqual([
        { functionDeclarations: [expect.objectContaining({ name: 'shell' }), expect.objectContaining({ name: 'mcp__docs__search_docs' })] },
        { googleSearch: {} },
      ]);
    }
  });

  it('leaves web_search out for an OpenAI-compatible chat vendor with a header, and keeps the flattened tools', async () => {
    await addOpenAi(CLAUDE.chatModel);
    for (const stream of [true, false]) {
      const response = await harness.post('/v1/responses', { ...fixture('codex.builtin-tools'), model: CLAUDE.chatModel, stream });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('x-switchboard-dropped-tools')).toBe('web_search');
      await response.text();
      expect(sentToOpenAi().tools.map((tool: Json) => tool.function.name)).toEqual(['shell', 'mcp__docs__search_docs']);
      expect(sentToOpenAi()).not.toHaveProperty('web_search_options');
    }
  });

  it('still refuses the built-in tools no vendor but OpenAI has, by name, sending nothing and charging nothing', async () => {
    await addClaude();
    const before = anthropic.requests.length;
    const balance = await harness.balances();
    const body = fixture('codex.builtin-tools');
    for (const stream of [true, false]) {
      const response = await harness.post('/v1/responses', {
        ...body,
        tools: [...body.tools, { type: 'file_search', vector_store_ids: ['vs_1'] }],
        model: CLAUDE.chatModel,
        stream,
      });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: Json };
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toContain('this request cannot be sent to an anthropic channel');
      expect(error.message).toContain('"file_search"');
      expect(error.message).not.toContain('web_search');
    }
    expect(anthropic.requests.length).toBe(before);
    expect((await harness.balances()).token.remain_quota).toBe(balance.token.remain_quota);
  });

  it('sends the function tools alone when the client sends no built-in one', async () => {
    await addClaude();
    const body = fixture('codex.builtin-tools');
    const functions = body.tools.filter((tool: Json) => tool.type === 'function');
    const response = await harness.post('/v1/responses', { ...body, model: CLAUDE.chatModel, tools: functions, stream: false });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToClaude().tools.map((tool: Json) => tool.name)).toEqual(['shell']);
  });

  it("sends the client's max_output_tokens for a model the catalog does not list, not a fixed 4096", async () => {
    // a model of Anthropic's newer than either catalog, priced by the operator
    const unlisted = 'claude-next-preview';
    await harness.app.ctx.options.set('ModelMaxOutputTokens', JSON.stringify({}));
    await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ [unlisted]: 1.5 }));
    await addClaude({ models: unlisted });
    const body = fixture('openai-agents.first-request');
    const response = await harness.post('/v1/responses', { ...body, model: unlisted, max_output_tokens: 20000, stream: false });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToClaude().max_tokens).toBe(20000);
  });

  it("lowers it to the catalog's maximum for a model the catalog lists", async () => {
    await harness.app.ctx.options.set('ModelMaxOutputTokens', JSON.stringify({ [CLAUDE.chatModel]: 8192 }));
    await addClaude();
    const response = await harness.post('/v1/responses', {
      ...fixture('openai-agents.first-request'),
      model: CLAUDE.chatModel,
      max_output_tokens: 20000,
      stream: false,
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToClaude().max_tokens).toBe(8192);
  });

  it('passes a translating channel by for one that serves Responses itself, without spending a retry on it', async () => {
    await addClaude({ priority: 10 });
    await harness.addChannel({
      type: 1,
      name: 'openai-own',
      key: 'sk-good',
      base_url: harness.emulator.baseUrl,
      models: CLAUDE.chatModel,
      priority: 0,
    });
    const before = anthropic.requests.length;
    const body = fixture('codex.builtin-tools');
    const tools = [...body.tools, { type: 'file_search', vector_store_ids: ['vs_1'] }];
    const response = await harness.post('/v1/responses', { ...body, tools, model: CLAUDE.chatModel, stream: false });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(anthropic.requests.length).toBe(before);
    expect(harness.emulator.requests.at(-1)).toMatchObject({
      path: '/v1/responses',
      body: { tools: [{ type: 'function' }, { type: 'web_search' }, { type: 'namespace' }, { type: 'file_search' }] },
    });
  });

  it('still passes the built-in tools as bytes to a channel that serves Responses itself', async () => {
    await harness.addChannel({ type: 1, name: 'openai-own', key: 'sk-good', base_url: harness.emulator.baseUrl, models: 'gpt-4o' });
    const response = await harness.post('/v1/responses', { ...fixture('codex.builtin-tools'), model: 'gpt-4o', stream: false });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(sentToOpenAi().tools.map((tool: Json) => tool.type)).toEqual(['function', 'web_search', 'namespace']);
  });
});
