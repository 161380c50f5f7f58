// The translation contract every client protocol passes with every upstream
// adaptor: what a client sends survives its codec and the vendor's encoder,
// and what a vendor answers survives the adaptor's decoder and the codec's
// encoder. Over the adaptors' recorded fixtures (contract.ts):
//
//   request  a client request with a system prompt, a tool, a user turn with an
//            image, the assistant's call of the tool and its result →
//            the codec's chat form → adaptor.encodeChat: the vendor's request
//            carries the tool (name and schema), the image (where the vendor's
//            chat takes images), the earlier call and its result, each in the
//            vendor's form (read by vendorRequests.ts)
//   answer   <adaptor>/{chat,tools}.answer.json and .stream.txt →
//            decodeChat / decodeChatStream → the codec's encodeResponse /
//            encodeStream: the client reads the text, the tool calls (names
//            and arguments), the stop reason in its protocol's words, and the
//            vendor's usage (a `length` finish is checked on the whole answer)
//
// A protocol joins with one InboundDescription: how to build its request,
// and, when its answers are not OpenAI's chat form, how to read them back.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InboundCodec } from '../../../server/protocols/inbound';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { loadBedrockLibraries } from '../../../server/protocols/upstream/bedrock/libraries';
import {
  isUpstreamFailure,
  type ChannelConfig,
  type ChannelProtocol,
  type ChatRequest,
  type ChatResponse,
  type Usage,
} from '../../../server/protocols/types';
import { callFor, decodeStream, fixtureDir, type Expectation } from './contract';
import { VENDOR_REQUESTS } from './vendorRequests';

/** What the round-trip request holds; a description builds it in its protocol. */
export interface RoundTripTurns {
  model: string;
  stream: boolean;
  system: string;
  tool: { name: string; description: string; parameters: { type: 'object'; properties: Record<string, unknown>; required: string[] } };
  userText: string;
  /** A PNG as base64 (no data: prefix). */
  image: { mediaType: string; data: string };
  call: { id: string; arguments: Record<string, unknown> };
  result: string;
}

export const TURNS: RoundTripTurns = {
  model: 'client-model',
  stream: false,
  system: 'You answer questions about files. Be brief.',
  tool: {
    name: 'read_file',
    description: 'Reads a file of the workspace.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'The file to read' }, lines: { type: 'integer' } },
      required: ['path'],
    },
  },
  userText: 'What does the chart in this picture say about notes.txt?',
  image: {
    mediaType: 'image/png',
    data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  },
  call: { id: 'call_roundtrip_1', arguments: { path: 'notes.txt', lines: 20 } },
  result: 'notes.txt: buy milk; the chart shows sales rising in May',
};

/** An answer as the client reads it. */
export interface ClientAnswer {
  text: string;
  toolCalls: Array<{ name: string; arguments: unknown }>;
  stopReason: string;
  usage: Usage;
}

export interface InboundDescription {
  codec: InboundCodec;
  /** The round-trip request in the protocol. */
  request(turns: RoundTripTurns): Record<string, unknown>;
  /**
   * The request in the relay's chat form: the codec's chatRequest, or the body
   * itself for OpenAI chat. `call`: the model and stream the route read (from
   * the path, for a protocol whose body says neither, as Gemini's).
   */
  toChat(body: Record<string, unknown>, call: { model: string; streamed: boolean }): ChatRequest;
  /** Absent for a protocol whose answers go out in OpenAI's chat form (the adaptor contract covers those). */
  answers?: {
    /** Reads a whole answer the codec wrote (encodeResponse). */
    readJson(body: string): ClientAnswer;
    /** Reads the events the codec's stream encoder wrote. */
    readStream(events: string): ClientAnswer;
    /** The protocol's words for the relay's finish reasons. */
    stopReasons: Record<'stop' | 'length' | 'tool_calls', string>;
    /**
     * False for a protocol whose usage has no field for the tokens written to
     * the vendor's prompt cache (Responses, Gemini): they are still in the
     * prompt's count, only not told apart.
     */
    cacheWrites?: boolean;
  };
}

const readJson = <T>(dir: string, name: string): T => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;

/** The usage a decoded whole answer reports, as the relay bills it (server/relay/translate.ts `reported`). */
function usageOf(chat: ChatResponse): Usage {
  const usage: Usage = {
    promptTokens: chat.usage.prompt_tokens,
    completionTokens: chat.usage.completion_tokens,
    cachedPromptTokens: chat.usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
  const written = chat.usage.prompt_tokens_details?.cache_creation_tokens;
  if (written) usage.cacheCreationTokens = written;
  return usage;
}

function expectUsage(actual: Usage, expected: Usage): void {
  expect(actual.promptTokens).toBe(expected.promptTokens);
  expect(actual.completionTokens).toBe(expected.completionTokens);
  expect(actual.cachedPromptTokens).toBe(expected.cachedPromptTokens);
  expect(actual.cacheCreationTokens ?? 0).toBe(expected.cacheCreationTokens ?? 0);
}

/** The translation contract of one client protocol with every upstream adaptor. */
export function describeInbound(name: string, description: InboundDescription): void {
  const { codec } = description;

  describe(`inbound translation contract: ${name}`, () => {
    // AWS's codec loads at a Bedrock call's signing; these decode fixtures without one
    beforeAll(() => loadBedrockLibraries());
    for (const [protocol, adaptor] of Object.entries(UPSTREAM_ADAPTORS) as Array<
      [ChannelProtocol, (typeof UPSTREAM_ADAPTORS)[ChannelProtocol]]
    >) {
      const dir = fixtureDir(protocol);
      const channel = readJson<ChannelConfig>(dir, 'channel.json');
      const view = VENDOR_REQUESTS[protocol];

      it(`→ ${protocol}: the tool, the image, the earlier call and its result reach the vendor in its form`, () => {
        for (const stream of [false, true]) {
          const chat = description.toChat(description.request({ ...TURNS, stream }), { model: TURNS.model, streamed: stream });
          const call = callFor('chat', view.model, stream, channel);
          const target = adaptor.target(channel, call);
          if (isUpstreamFailure(target)) throw new Error(target.message);
          if (view.plainTurns) {
            // a vendor without tools refuses the turns rather than drop the call and its result
            expect(() => adaptor.encodeChat({ ...chat, model: view.model }, call)).toThrow(/tool/);
            continue;
          }
          const vendor = JSON.parse(adaptor.encodeChat({ ...chat, model: view.model }, call)) as Record<string, unknown>;
          expect(view.systemText(vendor)).toContain(TURNS.system);
          expect(view.conversationText(vendor)).toContain(TURNS.userText);
          const tool = view.tools(vendor).find((candidate) => candidate.name === TURNS.tool.name);
          expect(tool, 'the tool').toBeDefined();
          expect(Object.keys((tool!.parameters?.properties as object | undefined) ?? {})).toEqual(
            Object.keys(TURNS.tool.parameters.properties),
          );
          expect(tool!.parameters?.required).toEqual(TURNS.tool.parameters.required);
          const images = view.images(vendor);
          // undefined: the vendor's chat takes no images (ERNIE, Spark); the rest must carry it
          if (images !== undefined) expect(images).toEqual([TURNS.image.data]);
          expect(view.toolCalls(vendor)).toEqual([{ name: TURNS.tool.name, arguments: TURNS.call.arguments }]);
          const results = view.toolResults(vendor);
          expect(
            results.some((result) => result.includes(TURNS.result)),
            'the tool result',
          ).toBe(true);
          // a WebSocket call always streams (the relay folds it for a whole answer)
          expect(view.streamed(vendor, target)).toBe(adaptor.transport === 'websocket' ? true : stream);
        }
      });

      const answers = description.answers;
      if (!answers) continue;
      // the client's request, which a protocol's answer may repeat settings of (Responses)
      const requestOf = (stream: boolean) => description.request({ ...TURNS, stream });
      for (const scenario of ['chat', 'tools'] as const) {
        if (!existsSync(join(dir, `${scenario}.answer.json`))) continue;
        const expected = readJson<Expectation>(dir, `${scenario}.expect.json`);
        const fixture = readJson<{ request: { model: string }; model?: string }>(dir, `${scenario}.request.json`);
        const model = fixture.model ?? fixture.request.model;
        const expectAnswer = (answer: ClientAnswer) => {
          expect(answer.text).toBe(expected.text);
          expect(answer.toolCalls).toEqual(expected.tool_calls ?? []);
          expect(answer.stopReason).toBe(answers.stopReasons[expected.finish_reason as 'stop' | 'tool_calls']);
          expectUsage(answer.usage, answers.cacheWrites === false ? { ...expected.usage, cacheCreationTokens: 0 } : expected.usage);
        };

        it(`← ${protocol} ${scenario}: a whole answer reaches the client with its tool calls, stop reason and the vendor's usage`, () => {
          const decoded = adaptor.decodeChat(
            readFileSync(join(dir, `${scenario}.answer.json`), 'utf8'),
            callFor('chat', model, false, channel),
          );
          if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
          expectAnswer(answers.readJson(codec.encodeResponse!(decoded, usageOf(decoded), TURNS.model, requestOf(false))));
          // an answer cut at the limit says so in the protocol's words
          const cut: ChatResponse = { ...decoded, choices: decoded.choices.map((choice) => ({ ...choice, finish_reason: 'length' })) };
          expect(answers.readJson(codec.encodeResponse!(cut, usageOf(decoded), TURNS.model, requestOf(false))).stopReason).toBe(
            answers.stopReasons.length,
          );
        });

        const binaryStream = join(dir, `${scenario}.stream.bin`);
        const streamFile = existsSync(binaryStream) ? binaryStream : join(dir, `${scenario}.stream.txt`);
        if (existsSync(streamFile)) {
          it(`← ${protocol} ${scenario}: a stream reaches the client with its tool calls, stop reason and the vendor's usage`, () => {
            const call = callFor('chat', model, true, channel);
            const decoded = decodeStream(adaptor, call, readFileSync(streamFile));
            const { chunks } = decoded;
            // a followed stream (Replicate) carries no usage: the relay asks the vendor's record of the call, the whole answer
            const usage = decoded.usage ?? adaptor.usageAfterStream?.(readFileSync(join(dir, `${scenario}.answer.json`), 'utf8'), call);
            expect(usage).toBeDefined();
            const encoder = codec.encodeStream!(TURNS.model, requestOf(true));
            // as the relay writes it: chunk by chunk, with the usage known so far, then the end
            let events = '';
            chunks.forEach(
              (chunk, index) => (events += encoder.chunks([chunk], index === chunks.length - 1 ? usage : undefined, call.responseId)),
            );
            events += encoder.end(usage!, call.responseId);
            expectAnswer(answers.readStream(events));
            // and the same answer folded whole agrees
            expect(answers.readStream(events)).toEqual(
              answers.readJson(codec.encodeResponse!(assembleChatResponse(chunks, call, usage!), usage!, TURNS.model, requestOf(true))),
            );
          });
        }
      }
    }
  });
}
