// Requests as real clients send them (__fixtures__/clients, see its README for
// where each shape comes from), replayed through every translation path: the
// client's codec decodes it (chatRequest) and every upstream adaptor encodes
// it (encodeChat) with the channel its contract fixtures were recorded for.
// Each vendor request must keep the system prompt, every tool with its
// schema, the user turn's text, the output limit and the stream flag (and the
// prompt-cache marks where the vendor has them); a vendor that speaks the
// client's protocol gets the client's bytes with only the model changed; and
// the pipeline's numbers (prompt bound, reservation) hold for the request.
//
// Adding a client: its fixture pair in __fixtures__/clients, one row in
// CLIENT_FIXTURES, and (once per protocol) a reader in CLIENT_READERS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INBOUND_CODECS, type InboundCodec } from '../../../server/protocols/inbound';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChannelProtocol, type InboundProtocol } from '../../../server/protocols/types';
import {
  cacheCreationRatioFor,
  completionRatioFor,
  computeQuota,
  maxOutputTokensFor,
  reservationQuota,
} from '../../../server/billing/prices';
import { callFor, fixtureDir, FIXTURES } from './contract';
import { VENDOR_REQUESTS } from './vendorRequests';

/** What a client's request asks for that every translation must keep, read off the client's own body. */
interface ClientIntent {
  model: string;
  /** Each system text block (each must reach the vendor's system prompt). */
  systemTexts: string[];
  /** Each text of the user turns (each must reach the vendor's conversation). */
  userTexts: string[];
  tools: Array<{ name: string; properties: string[]; required: string[] }>;
  outputLimit: number;
  stream: boolean;
  /** The texts the client marked for the prompt cache. */
  cacheMarkedTexts: string[];
}

type Block = Record<string, unknown>;
const blocks = (value: unknown): Block[] => (Array.isArray(value) ? (value as Block[]) : []);
const texts = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : blocks(value)
        .filter((block) => block.type === 'text')
        .map((block) => String(block.text));

/** Responses' input items of these roles (a string input is one user message). */
const responsesMessages = (input: unknown, roles: string[]): Block[] =>
  typeof input === 'string'
    ? roles.includes('user')
      ? [{ role: 'user', content: input }]
      : []
    : blocks(input).filter((item) => (item.type ?? 'message') === 'message' && roles.includes(String(item.role)));
/** The text parts of Responses content (input_text), or the string itself. */
const responsesTexts = (content: unknown): string[] =>
  typeof content === 'string'
    ? [content]
    : blocks(content)
        .filter((part) => part.type === 'input_text')
        .map((part) => String(part.text));
/** The text parts of a Gemini Content (a bare string for systemInstruction too). */
const geminiTexts = (content: unknown): string[] =>
  typeof content === 'string'
    ? [content]
    : blocks((content as Block | undefined)?.parts)
        .filter((part) => typeof part.text === 'string')
        .map((part) => String(part.text));

/** A tool's schema as the intent holds it. */
const toolOf = (name: unknown, schema: unknown) => {
  const { properties, required } = (schema ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  return { name: String(name), properties: Object.keys(properties ?? {}), required: required ?? [] };
};

/** How to read a client protocol's request: one per protocol that has client fixtures. */
const CLIENT_READERS: { [protocol in InboundProtocol]?: (body: Block, path: PathParts) => ClientIntent } = {
  anthropic: (body) => ({
    model: String(body.model),
    systemTexts: texts(body.system),
    userTexts: blocks(body.messages)
      .filter((message) => message.role === 'user')
      .flatMap((message) => texts(message.content)),
    tools: blocks(body.tools).map((tool) => toolOf(tool.name, tool.input_schema)),
    outputLimit: Number(body.max_tokens),
    stream: body.stream === true,
    cacheMarkedTexts: [...blocks(body.system), ...blocks(body.messages).flatMap((message) => blocks(message.content))]
      .filter((block) => block.cache_control !== undefined)
      .map((block) => String(block.text)),
  }),
  'openai-responses': (body) => ({
    model: String(body.model),
    systemTexts: [
      ...(typeof body.instructions === 'string' ? [body.instructions] : []),
      ...responsesMessages(body.input, ['system', 'developer']).flatMap((item) => responsesTexts(item.content)),
    ],
    userTexts: responsesMessages(body.input, ['user']).flatMap((item) => responsesTexts(item.content)),
    // a namespace's functions (Codex's MCP servers) go to every chat vendor under their flat names
    tools: blocks(body.tools).flatMap((tool) =>
      tool.type === 'function'
        ? [toolOf(tool.name, tool.parameters)]
        : tool.type === 'namespace'
          ? blocks(tool.tools).map((inner) => toolOf(`${String(tool.name)}__${String(inner.name)}`, inner.parameters))
          : [],
    ),
    outputLimit: Number(body.max_output_tokens ?? 0),
    stream: body.stream === true,
    // Responses has no cache marks (OpenAI caches prompts by itself)
    cacheMarkedTexts: [],
  }),
  // the body names neither model nor stream: the row's path does
  gemini: (body, path) => ({
    model: path.model ?? '',
    systemTexts: geminiTexts(body.systemInstruction),
    userTexts: blocks(body.contents)
      .filter((content) => content.role !== 'model')
      .flatMap((content) => geminiTexts(content)),
    tools: blocks(body.tools)
      .flatMap((tool) => blocks(tool.functionDeclarations))
      .map((declaration) => toolOf(declaration.name, declaration.parametersJsonSchema ?? declaration.parameters)),
    outputLimit: Number((body.generationConfig as Block | undefined)?.maxOutputTokens ?? 0),
    stream: path.method === 'streamGenerateContent',
    cacheMarkedTexts: [],
  }),
};

/**
 * The client requests (see the folder's README for where each shape comes
 * from), keyed by the codec (INBOUND_CODECS) that reads them. `least`: what
 * makes the fixture what it says it is (a coding agent's long prompt and many
 * tools; an SDK's first agent turn is smaller).
 */
const CLIENT_FIXTURES: Array<{
  file: string;
  codec: InboundProtocol;
  path: string;
  client: string;
  least: { systemChars: number; tools: number; promptTokens: number };
}> = [
  {
    file: 'claude-code.first-request',
    codec: 'anthropic',
    path: '/v1/messages',
    client: 'Claude Code (claude-cli 1.0)',
    least: { systemChars: 2000, tools: 10, promptTokens: 1000 },
  },
  {
    file: 'openai-agents.first-request',
    codec: 'openai-responses',
    path: '/v1/responses',
    client: 'OpenAI Agents SDK (JavaScript)',
    least: { systemChars: 400, tools: 3, promptTokens: 200 },
  },
  {
    file: 'codex.builtin-tools',
    codec: 'openai-responses',
    path: '/v1/responses',
    client: 'Codex CLI 0.171 (web_search and a namespace)',
    least: { systemChars: 200, tools: 2, promptTokens: 150 },
  },
  {
    file: 'gemini-cli.tool-turn',
    codec: 'gemini',
    path: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    client: 'Gemini CLI 0.61',
    least: { systemChars: 100, tools: 2, promptTokens: 100 },
  },
  {
    file: 'google-genai.first-request',
    codec: 'gemini',
    path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    client: '@google/genai (JavaScript)',
    least: { systemChars: 300, tools: 2, promptTokens: 150 },
  },
];

/** What the route reads off a `/v1beta/models/{model}:{method}` path (undefined for the other routes). */
interface PathParts {
  model?: string;
  method?: string;
}
const pathParts = (path: string): PathParts => {
  const match = /\/models\/([^/:?]+):(\w+)/.exec(path);
  return match ? { model: match[1], method: match[2] } : {};
};

const CLIENTS = join(FIXTURES, 'clients');
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Whether a chat request offers tools or holds tool turns. */
const hasToolParts = (chat: { tools?: unknown[]; messages: Array<{ role: string; tool_calls?: unknown[] }> }): boolean =>
  (chat.tools?.length ?? 0) > 0 || chat.messages.some((message) => message.role === 'tool' || (message.tool_calls?.length ?? 0) > 0);

/** Each text, whole, somewhere in the vendor's text (vendors join blocks each their own way). */
function expectContainsEach(haystack: string, needles: string[]): void {
  for (const needle of needles) expect(haystack.includes(needle), `missing: ${needle.slice(0, 80)}...`).toBe(true);
}

/**
 * Each recorded request as it was sent, and its twin the other way (streamed
 * or not): the same body with `stream` flipped, or Gemini's other method.
 */
const VARIANTS = CLIENT_FIXTURES.flatMap((fixture) => {
  const recorded = readJson<Block>(join(CLIENTS, `${fixture.file}.json`));
  const gemini = fixture.path.includes(':');
  const twinPath = fixture.path.includes(':streamGenerateContent')
    ? fixture.path.replace(':streamGenerateContent?alt=sse', ':generateContent')
    : fixture.path.replace(':generateContent', ':streamGenerateContent?alt=sse');
  const twinBody = recorded.stream === true ? { ...recorded, stream: false } : { ...recorded, stream: true };
  return [
    { fixture, body: recorded, path: fixture.path, label: 'as recorded' },
    { fixture, body: gemini ? recorded : twinBody, path: gemini ? twinPath : fixture.path, label: 'streamed the other way' },
  ];
});

for (const { fixture, body, path: routePath, label } of VARIANTS) {
  const headers = readJson<Record<string, string>>(join(CLIENTS, `${fixture.file}.headers.json`));
  const codec: InboundCodec = INBOUND_CODECS[fixture.codec];
  const read = CLIENT_READERS[fixture.codec];
  const path = pathParts(routePath);

  describe(`client fixture ${fixture.file}, ${label} (${fixture.client}, ${fixture.codec} codec, ${routePath})`, () => {
    if (!read) throw new Error(`no CLIENT_READERS entry for the ${fixture.codec} protocol`);
    const intent = read(body, path);

    it('is a request the codec takes: authorization, model, no problem, limit, stream', () => {
      expect(codec.authorization ? codec.authorization(headers) : headers.authorization).toMatch(/^Bearer \S+/);
      expect(intent.model).not.toBe('');
      expect(codec.model('chat', body, path.model)).toBe(intent.model);
      expect(codec.check('chat', body)).toBeUndefined();
      expect(codec.outputLimit(body)).toBe(intent.outputLimit);
      expect(codec.streamed(body, path.method)).toBe(intent.stream);
      expect(codec.answers('chat', body)).toBe(1);
      // the fixture is what it says it is: a long prompt, many tools
      expect(intent.systemTexts.join('').length).toBeGreaterThan(fixture.least.systemChars);
      expect(intent.tools.length).toBeGreaterThanOrEqual(fixture.least.tools);
    });

    it('the prompt bound holds the exact count, and the reservation covers the most the call can be billed', () => {
      const exact = codec.promptTokens('chat', body, intent.model, {});
      const bound = codec.promptTokens('chat', body, intent.model, { bound: true });
      expect(exact).toBeGreaterThan(fixture.least.promptTokens);
      expect(bound).toBeGreaterThanOrEqual(exact);
      // a byte bound, not a runaway: English text and JSON schemas run about four bytes a token
      expect(bound).toBeLessThan(exact * 8);
      const completionRatio = completionRatioFor(intent.model);
      const reserved = reservationQuota({
        promptTokens: bound,
        maxTokens: codec.outputLimit(body),
        maxOutputTokens: maxOutputTokensFor(intent.model, {}),
        n: codec.answers('chat', body),
        ratio: 1,
        completionRatio,
      });
      // the worst bill: the whole prompt written to the vendor's cache, the whole limit answered
      const worst = computeQuota({
        promptTokens: exact,
        completionTokens: intent.outputLimit,
        cachedPromptTokens: 0,
        cacheCreationTokens: exact,
        cacheCreationRatio: cacheCreationRatioFor(intent.model),
        ratio: 1,
        completionRatio,
      });
      expect(reserved).toBeGreaterThanOrEqual(worst);
      expect(Number.isSafeInteger(reserved)).toBe(true);
    });

    if (!codec.chatRequest) return;
    const chat = codec.chatRequest(body, { model: intent.model, streamed: intent.stream });

    for (const [protocol, adaptor] of Object.entries(UPSTREAM_ADAPTORS) as Array<
      [ChannelProtocol, (typeof UPSTREAM_ADAPTORS)[ChannelProtocol]]
    >) {
      const view = VENDOR_REQUESTS[protocol];
      const channel = readJson<ChannelConfig>(join(fixtureDir(protocol), 'channel.json'));

      it(`→ ${protocol}: the vendor request keeps the system prompt, every tool and its schema, the user's text, the limit and the stream`, () => {
        const call = callFor('chat', view.model, intent.stream, channel);
        const target = adaptor.target(channel, call);
        if (isUpstreamFailure(target)) throw new Error(target.message);
        if (view.plainTurns && hasToolParts(chat)) {
          // a vendor without tools refuses the request rather than answer as if they were not offered
          expect(() => adaptor.encodeChat({ ...chat, model: view.model }, call)).toThrow(/tool/);
          return;
        }
        // as the relay does: web search goes to a vendor with a search of its own, and is left out for the others
        const searches = chat.web_search_options !== undefined && adaptor.webSearch?.(view.model) === true;
        const sent = { ...chat, model: view.model };
        if (!searches) delete sent.web_search_options;
        let encoded = '';
        expect(() => (encoded = adaptor.encodeChat(sent, call))).not.toThrow();
        const vendor = JSON.parse(encoded) as Block;
        if (view.plainTurns) {
          expectContainsEach(
            view.conversationText(vendor),
            view.lastUserTextOnly ? intent.userTexts.slice(-1) : [...intent.systemTexts, ...intent.userTexts],
          );
          return;
        }

        expectContainsEach(view.systemText(vendor), intent.systemTexts);
        expectContainsEach(view.conversationText(vendor), intent.userTexts);
        // the vendor's own search tool, where the client asked for web search, is not one of the client's tools
        const tools = view.tools(vendor).filter((tool) => !(searches && tool.name === 'web_search' && tool.parameters === undefined));
        expect(tools.map((tool) => tool.name)).toEqual(intent.tools.map((tool) => tool.name));
        if (searches) expect(encoded, `${protocol}: its own search`).toMatch(/"web_search_20250305"|"googleSearch"|"web_search_options"/);
        tools.forEach((tool, index) => {
          const schema = tool.parameters as { properties?: Record<string, unknown>; required?: string[] } | undefined;
          expect(Object.keys(schema?.properties ?? {}), tool.name).toEqual(intent.tools[index].properties);
          expect(schema?.required ?? [], tool.name).toEqual(intent.tools[index].required);
        });
        // a client that sets no limit (Codex, Gemini CLI) gets none, or the vendor's required default (Anthropic's max_tokens)
        if (intent.outputLimit > 0) expect(view.outputLimit(vendor)).toBe(intent.outputLimit);
        else expect([undefined, 0].includes(view.outputLimit(vendor) as number) || Number(view.outputLimit(vendor)) > 0).toBe(true);
        expect(view.streamed(vendor, target)).toBe(view.alwaysStreams === true || intent.stream);
        if (view.cacheMarks) {
          // the vendor has prompt caching: every mark the client set is on the same text
          const marks = view.cacheMarks(vendor);
          expect(marks.map((mark) => mark.text)).toEqual(intent.cacheMarkedTexts);
          for (const mark of marks) expect(mark.cache_control).toEqual({ type: 'ephemeral' });
        }
      });

      if (adaptor.speaks === codec.protocol) {
        it(`→ ${protocol}: speaks the client's protocol, so the client's bytes pass with only the model changed`, () => {
          expect(codec.modelUnchanged(body, intent.model)).toBe(true);
          const changed = JSON.parse(codec.encodeChanged(body, { model: `${intent.model}-mapped`, askUsage: false })) as Block;
          if (path.model === undefined) {
            expect(codec.modelUnchanged(body, `${intent.model}-mapped`)).toBe(false);
            expect(changed).toEqual({ ...body, model: `${intent.model}-mapped` });
          } else {
            // the model is in the path (the adaptor writes the upstream's there): the body goes on as it is
            expect(codec.modelUnchanged(body, `${intent.model}-mapped`)).toBe(true);
            expect(changed).toEqual(body);
          }
          // Anthropic's beta flags go on with the client's bytes
          if (headers['anthropic-beta']) expect(codec.forwardedHeaders?.(headers)).toEqual({ 'anthropic-beta': headers['anthropic-beta'] });
        });
      }
    }
  });
}
