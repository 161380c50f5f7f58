// The contract every upstream adaptor passes, over recorded fixtures in one
// folder per adaptor or variant (fixtureDir): beside the adaptor for a vendor
// with its own folder (server/protocols/upstream/<vendor>/__fixtures__/, a
// variant in a subfolder of it), else here in __fixtures__/<name>/:
//
//   channel.json            {"type", "key", "baseUrl", "other"}: the channel the fixtures were recorded for
//   chat.request.json       {"request": ChatRequest, "model"?: upstream model,
//                            "target": {"url", "method", "headers" (a subset to match)},
//                            "body": the encoded request the vendor gets (compared as JSON; for a
//                            WebSocket adaptor, the one frame sent)}
//   chat.answer.json        the vendor's whole answer (JSON)
//   chat.stream.txt         the vendor's stream: the exact wire bytes (SSE), or for a WebSocket adaptor
//                           one frame per line; for an adaptor that follows a stream whose events carry no
//                           usage (Replicate), the usage is its usageAfterStream of chat.answer.json
//   chat.stream.bin         in its place for a binary stream (Bedrock's event stream): the exact wire bytes
//   chat.expect.json        {"text", "finish_reason", "usage": Usage, "tool_calls"?: [{name, arguments}]}:
//                           what both the answer and the stream must come to
//   tools.request.json, tools.answer.json, tools.stream.txt, tools.expect.json
//                           the same for a call with tools, when the vendor has them
//   error.json              {"status", "body"}: an ordinary refusal (not a dead key)
//   dead-key.json           {"status", "body"}: the vendor's words for a key that can never work
//   embeddings.request.json, embeddings.answer.json, embeddings.expect.json ({"count", "usage"})
//                           when the adaptor offers embeddings
//
// It checks that what the adaptor produces is valid OpenAI: ids, object,
// model and indexes set, exactly one finish reason per choice, usage present
// and equal to the vendor's, tool calls intact; and that the stream decodes
// to the same chunks however its bytes are cut.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatResponse,
  type UpstreamAdaptor,
  type Usage,
} from '../../../server/protocols/types';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { loadBedrockLibraries } from '../../../server/protocols/upstream/bedrock/libraries';

export const FIXTURES = join(__dirname, '__fixtures__');

const UPSTREAM = join(__dirname, '..', '..', '..', 'server', 'protocols', 'upstream');

/** Fixtures kept beside their adaptor, by contract name; the others are in FIXTURES/<name>. */
const BESIDE_THE_ADAPTOR: Record<string, string> = {
  anthropic: join(UPSTREAM, 'anthropic', '__fixtures__'),
  gemini: join(UPSTREAM, 'gemini', '__fixtures__'),
  'gemini-palm': join(UPSTREAM, 'gemini', '__fixtures__', 'palm'),
  zhipu: join(UPSTREAM, 'zhipu', '__fixtures__'),
  'zhipu-v3': join(UPSTREAM, 'zhipu', '__fixtures__', 'v3'),
  baidu: join(UPSTREAM, 'baidu', '__fixtures__'),
  ali: join(UPSTREAM, 'ali', '__fixtures__'),
  xunfei: join(UPSTREAM, 'xunfei', '__fixtures__'),
  vertex: join(UPSTREAM, 'vertex', '__fixtures__'),
  'vertex-claude': join(UPSTREAM, 'vertex', '__fixtures__', 'claude'),
  coze: join(UPSTREAM, 'coze', '__fixtures__'),
  replicate: join(UPSTREAM, 'replicate', '__fixtures__'),
  deepl: join(UPSTREAM, 'deepl', '__fixtures__'),
  bedrock: join(UPSTREAM, 'bedrock', '__fixtures__'),
};

/** The folder of one adaptor's (or variant's) recorded fixtures. */
export const fixtureDir = (name: string): string => BESIDE_THE_ADAPTOR[name] ?? join(FIXTURES, name);

/** What a scenario's answer and stream must come to (`<scenario>.expect.json`). */
export interface Expectation {
  text: string;
  finish_reason: string;
  usage: Usage;
  tool_calls?: Array<{ name: string; arguments: unknown }>;
}

const readJson = <T>(dir: string, name: string): T => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;

export function callFor(operation: AdaptorCall['operation'], model: string, stream: boolean, channel?: ChannelConfig): AdaptorCall {
  return { operation, model, stream, responseId: 'chatcmpl-contract', now: 1_700_000_000, credential: 'contract-credential', channel };
}

/** Feeds a stream fixture to a fresh decoder, cut at the given byte offsets (SSE) or frame by frame (WebSocket). */
export function decodeStream(
  adaptor: UpstreamAdaptor,
  call: AdaptorCall,
  wire: Buffer,
  cuts: number[] = [],
): { chunks: ChatChunk[]; usage: Usage | undefined; done: boolean } {
  const decoder = adaptor.decodeChatStream(call);
  const chunks: ChatChunk[] = [];
  if (adaptor.transport === 'websocket') {
    for (const frame of wire
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim() !== ''))
      chunks.push(...decoder.push(frame));
  } else {
    let start = 0;
    for (const cut of [...cuts, wire.length]) {
      chunks.push(...decoder.push(wire.subarray(start, cut)));
      start = cut;
    }
  }
  chunks.push(...decoder.end());
  expect(decoder.failure()).toBeUndefined();
  return { chunks, usage: decoder.usage(), done: decoder.done() };
}

function expectValidChunks(chunks: ChatChunk[], call: AdaptorCall): void {
  expect(chunks.length).toBeGreaterThan(0);
  const finishes = new Map<number, number>();
  for (const chunk of chunks) {
    expect(chunk.object).toBe('chat.completion.chunk');
    expect(typeof chunk.id === 'string' && chunk.id.length > 0).toBe(true);
    expect(typeof chunk.model === 'string' && chunk.model.length > 0).toBe(true);
    expect(Number.isInteger(chunk.created) && chunk.created > 0).toBe(true);
    for (const choice of chunk.choices) {
      expect(Number.isInteger(choice.index)).toBe(true);
      expect(choice.delta).toBeTypeOf('object');
      // an intermediate chunk says null, never ""
      expect(choice.finish_reason === null || typeof choice.finish_reason === 'string').toBe(true);
      expect(choice.finish_reason).not.toBe('');
      if (choice.finish_reason) finishes.set(choice.index, (finishes.get(choice.index) ?? 0) + 1);
    }
  }
  expect(finishes.size).toBeGreaterThan(0);
  for (const times of finishes.values()) expect(times).toBe(1);
  // one stream, one id
  expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
  void call;
}

function expectValidResponse(response: ChatResponse): void {
  expect(response.object).toBe('chat.completion');
  expect(typeof response.id === 'string' && response.id.length > 0).toBe(true);
  expect(typeof response.model === 'string' && response.model.length > 0).toBe(true);
  expect(Number.isInteger(response.created) && response.created > 0).toBe(true);
  expect(response.choices.length).toBeGreaterThan(0);
  response.choices.forEach((choice, position) => {
    expect(choice.index).toBe(position);
    expect(choice.message.role).toBe('assistant');
    expect(typeof choice.finish_reason === 'string' && choice.finish_reason.length > 0).toBe(true);
  });
  expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens + response.usage.completion_tokens);
}

function expectMatches(response: ChatResponse, expected: Expectation): void {
  const choice = response.choices[0];
  expect(choice.message.content ?? '').toBe(expected.text);
  expect(choice.finish_reason).toBe(expected.finish_reason);
  expect(response.usage.prompt_tokens).toBe(expected.usage.promptTokens);
  expect(response.usage.completion_tokens).toBe(expected.usage.completionTokens);
  expect(response.usage.prompt_tokens_details?.cached_tokens ?? 0).toBe(expected.usage.cachedPromptTokens);
  if (expected.tool_calls) {
    const calls = choice.message.tool_calls ?? [];
    expect(calls.map((call) => ({ name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown }))).toEqual(
      expected.tool_calls,
    );
    for (const call of calls) {
      expect(call.id.length).toBeGreaterThan(0);
      expect(call.type).toBe('function');
    }
  }
}

function expectUsage(usage: Usage | undefined, expected: Usage): void {
  expect(usage).toBeDefined();
  expect(usage!.promptTokens).toBe(expected.promptTokens);
  expect(usage!.completionTokens).toBe(expected.completionTokens);
  expect(usage!.cachedPromptTokens).toBe(expected.cachedPromptTokens);
  if (expected.cacheCreationTokens !== undefined) expect(usage!.cacheCreationTokens ?? 0).toBe(expected.cacheCreationTokens);
  if (expected.reasoningTokens !== undefined) expect(usage!.reasoningTokens ?? 0).toBe(expected.reasoningTokens);
}

/** The contract for one adaptor over its fixtures (fixtureDir(name)). */
export function describeAdaptor(name: string, adaptor: UpstreamAdaptor): void {
  const dir = fixtureDir(name);
  const channel = readJson<ChannelConfig>(dir, 'channel.json');

  describe(`upstream adaptor contract: ${name}`, () => {
    // AWS's codec loads at a Bedrock call's signing; these decode fixtures without one
    beforeAll(() => loadBedrockLibraries());
    it('has a docs link and offers chat', () => {
      expect(adaptor.docs).toMatch(/^https:\/\//);
      expect(adaptor.operations.has('chat')).toBe(true);
    });

    for (const scenario of ['chat', 'tools'] as const) {
      if (!existsSync(join(dir, `${scenario}.request.json`))) continue;
      const fixture = readJson<{
        request: { model: string };
        model?: string;
        target: { url: string; method: string; headers: Record<string, string> };
        body: unknown;
      }>(dir, `${scenario}.request.json`);
      const model = fixture.model ?? fixture.request.model;
      const expected = readJson<Expectation>(dir, `${scenario}.expect.json`);

      it(`${scenario}: targets the vendor and encodes the request as recorded`, () => {
        for (const stream of [false, true]) {
          const call = callFor('chat', model, stream, channel);
          const target = adaptor.target(channel, call);
          expect(isUpstreamFailure(target)).toBe(false);
          if (isUpstreamFailure(target)) return;
          if (!stream) {
            expect(target.url).toBe(fixture.target.url);
            expect(target.method).toBe(fixture.target.method);
            expect(target.headers).toMatchObject(fixture.target.headers);
            expect(JSON.parse(adaptor.encodeChat(fixture.request as never, call))).toEqual(fixture.body);
          } else {
            // the streamed request differs only where the vendor wants it to: it still parses and names the model
            expect(() => JSON.parse(adaptor.encodeChat({ ...(fixture.request as object), stream: true } as never, call))).not.toThrow();
          }
        }
      });

      it(`${scenario}: a whole answer becomes a valid chat.completion with the vendor's usage`, () => {
        const call = callFor('chat', model, false, channel);
        const decoded = adaptor.decodeChat(readFileSync(join(dir, `${scenario}.answer.json`), 'utf8'), call);
        expect(isUpstreamFailure(decoded)).toBe(false);
        if (isUpstreamFailure(decoded)) return;
        expectValidResponse(decoded);
        expectMatches(decoded, expected);
      });

      const binaryStream = join(dir, `${scenario}.stream.bin`);
      const streamFile = existsSync(binaryStream) ? binaryStream : join(dir, `${scenario}.stream.txt`);
      if (existsSync(streamFile)) {
        const wire = readFileSync(streamFile);

        it(`${scenario}: a stream becomes valid chunks, one finish reason, usage reported`, () => {
          const call = callFor('chat', model, true, channel);
          const decoded = decodeStream(adaptor, call, wire);
          const { chunks, done } = decoded;
          // a followed stream (Replicate) carries no usage: the relay asks the vendor's record of the call, the scenario's whole answer
          const usage = decoded.usage ?? adaptor.usageAfterStream?.(readFileSync(join(dir, `${scenario}.answer.json`), 'utf8'), call);
          expectValidChunks(chunks, call);
          expect(done).toBe(true);
          expectUsage(usage, expected.usage);
          const whole = assembleChatResponse(chunks, call, usage!);
          expectValidResponse(whole);
          expectMatches(whole, expected);
        });

        if (adaptor.transport === 'http') {
          it(`${scenario}: the stream cut at every byte offset gives the same chunks`, () => {
            const call = callFor('chat', model, true, channel);
            const whole = decodeStream(adaptor, call, wire);
            for (let offset = 1; offset < wire.length; offset += 1) {
              const cut = decodeStream(adaptor, call, wire, [offset]);
              expect(cut.chunks, `cut at byte ${offset}`).toEqual(whole.chunks);
              expect(cut.usage).toEqual(whole.usage);
            }
            // and byte by byte
            const single = decodeStream(
              adaptor,
              call,
              wire,
              Array.from({ length: wire.length - 1 }, (_, index) => index + 1),
            );
            expect(single.chunks).toEqual(whole.chunks);
          });
        }
      }
    }

    it('an ordinary refusal is classified, not taken for a dead key', () => {
      const { status, body } = readJson<{ status: number; body: unknown }>(dir, 'error.json');
      const failure = adaptor.failure(status, typeof body === 'string' ? body : JSON.stringify(body));
      expect(failure.status).toBeGreaterThanOrEqual(400);
      expect(failure.message.length).toBeGreaterThan(0);
      expect(failure.message).not.toMatch(/^upstream answered HTTP/);
      expect(failure.deadKey).toBe(false);
    });

    it("the vendor's words for a dead key are read as one", () => {
      const { status, body } = readJson<{ status: number; body: unknown }>(dir, 'dead-key.json');
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const failure =
        status >= 200 && status < 300 ? adaptor.decodeChat(text, callFor('chat', 'm', false, channel)) : adaptor.failure(status, text);
      expect(isUpstreamFailure(failure)).toBe(true);
      if (!isUpstreamFailure(failure)) return;
      expect(failure.deadKey).toBe(true);
      expect(failure.retryable).toBe(true);
    });

    if (existsSync(join(dir, 'embeddings.request.json'))) {
      it('embeddings: encoded as recorded, answered in OpenAI shape with usage', () => {
        expect(adaptor.operations.has('embeddings')).toBe(true);
        const fixture = readJson<{
          request: { model: string };
          model?: string;
          target: { url: string; method: string; headers: Record<string, string> };
          body: unknown;
        }>(dir, 'embeddings.request.json');
        const call = callFor('embeddings', fixture.model ?? fixture.request.model, false, channel);
        const target = adaptor.target(channel, call);
        if (isUpstreamFailure(target)) throw new Error(target.message);
        expect(target.url).toBe(fixture.target.url);
        expect(target.headers).toMatchObject(fixture.target.headers);
        expect(JSON.parse(adaptor.encodeEmbeddings!(fixture.request as never, call))).toEqual(fixture.body);
        const decoded = adaptor.decodeEmbeddings!(readFileSync(join(dir, 'embeddings.answer.json'), 'utf8'), call);
        if (isUpstreamFailure(decoded)) throw new Error(decoded.message);
        const expected = readJson<{ count: number; usage: { prompt_tokens: number; total_tokens: number } }>(dir, 'embeddings.expect.json');
        expect(decoded.object).toBe('list');
        expect(decoded.data).toHaveLength(expected.count);
        decoded.data.forEach((item, index) => {
          expect(item.object).toBe('embedding');
          expect(item.index).toBe(index);
          expect(item.embedding.length).toBeGreaterThan(0);
        });
        expect(decoded.model.length).toBeGreaterThan(0);
        expect(decoded.usage).toEqual(expected.usage);
      });
    }
  });
}
