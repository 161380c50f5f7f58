// translate.ts on its own: a decoded vendor answer (here Anthropic's recorded
// stream and answer, through its adaptor) written to a real HTTP client as
// OpenAI would have written it, and the usage it hands back to be settled.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdaptorCall, ChatResponse } from '../../../server/protocols/types';
import { anthropicAdaptor } from '../../../server/protocols/upstream/anthropic';
import type { RoutedChannel } from '../../../server/relay/channelSelect';
import type { TranslatedAnswer, UpstreamAnswer } from '../../../server/relay/attempt';
import { answerTranslated, type TranslateOptions } from '../../../server/relay/translate';
import { UpstreamResponse } from '../../../server/relay/upstream';
import { countTextTokens } from '../../../server/protocols/inbound/tokenCount';
import { fixtureDir } from '../protocols/contract';

const MODEL = 'claude-3-5-haiku-20241022';
const KEY = 'sk-ant-api03-secret-key-of-the-channel';
const wire = readFileSync(join(fixtureDir('anthropic'), 'chat.stream.txt'));
const expected = JSON.parse(readFileSync(join(fixtureDir('anthropic'), 'chat.expect.json'), 'utf8')) as {
  text: string;
  usage: { promptTokens: number; completionTokens: number; cachedPromptTokens: number };
};
const call = (stream: boolean): AdaptorCall => ({
  operation: 'chat',
  model: MODEL,
  stream,
  responseId: 'chatcmpl-test',
  now: 1_700_000_000,
});

/** The vendor's bytes in small pieces, with a pause between, optionally breaking off after `breakAt` bytes. */
function vendorStream(breakAt?: number): Readable {
  const bytes = breakAt === undefined ? wire : wire.subarray(0, breakAt);
  return new Readable({
    read() {},
  }).on('newListener', function start(this: Readable, event) {
    if (event !== 'data') return;
    this.off('newListener', start);
    let offset = 0;
    const timer = setInterval(() => {
      if (this.destroyed) return clearInterval(timer);
      if (offset >= bytes.length) {
        clearInterval(timer);
        if (breakAt === undefined) this.push(null);
        else this.destroy(new Error('other side closed'));
        return;
      }
      this.push(bytes.subarray(offset, offset + 97));
      offset += 97;
    }, 1);
  });
}

interface Case {
  translated: TranslatedAnswer;
  options: Partial<TranslateOptions>;
}

let server: Server;
let baseUrl: string;
let next: Case;
let settled: Promise<unknown>;

beforeAll(async () => {
  server = createServer((_request, response) => {
    const channel = {
      id: 7,
      type: 14,
      key: KEY,
      base_url: '',
      other: '',
      model_mapping: '',
      priority: 0,
      weight: 1,
    } as unknown as RoutedChannel;
    const noLog = { warn: () => undefined } as unknown as UpstreamAnswer['log'];
    const answer: UpstreamAnswer = {
      channel,
      upstreamModel: MODEL,
      response: new UpstreamResponse(200, [], 'application/json'),
      requestId: 'req-test-1',
      log: noLog,
      translated: next.translated,
    };
    settled = answerTranslated(answer, response, {
      streamed: false,
      clientAskedUsage: false,
      promptTokens: () => 5,
      model: MODEL,
      approximate: false,
      ...next.options,
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((closed) => server.close(closed)));

function streamCase(streamed: boolean, source: Readable, options: Partial<TranslateOptions> = {}): Case {
  return {
    translated: {
      adaptor: anthropicAdaptor,
      call: call(streamed),
      stream: { decoder: anthropicAdaptor.decodeChatStream(call(streamed)), held: [], source: source.pause(), ended: false },
    },
    options: { streamed, ...options },
  };
}

const exact = {
  promptTokens: expected.usage.promptTokens,
  completionTokens: expected.usage.completionTokens,
  cachedPromptTokens: expected.usage.cachedPromptTokens,
  estimated: false,
};

/** The SSE events of a body, as parsed JSON (`[DONE]` kept as a string). */
const eventsOf = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => (event === 'data: [DONE]' ? '[DONE]' : JSON.parse(event.replace(/^data: /, ''))));

describe('answering a client from a translated answer', () => {
  it('folds a stream into one chat.completion for a client that did not ask to stream (stream-only vendors)', async () => {
    next = streamCase(false, vendorStream());
    const response = await fetch(baseUrl);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as ChatResponse;
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBe(expected.text);
    expect(body.usage).toMatchObject({
      prompt_tokens: expected.usage.promptTokens,
      completion_tokens: expected.usage.completionTokens,
      prompt_tokens_details: { cached_tokens: 2048 },
    });
    expect(await settled).toEqual(exact);
  });

  it('streams chunks, then the usage chunk the client asked for, then [DONE]; bills the reported usage', async () => {
    next = streamCase(true, vendorStream(), { clientAskedUsage: true });
    const response = await fetch(baseUrl);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = eventsOf(await response.text());
    expect(events.at(-1)).toBe('[DONE]');
    const usage = events.at(-2);
    expect(usage).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: expected.usage.promptTokens, completion_tokens: expected.usage.completionTokens },
    });
    const chunks = events.slice(0, -2);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(expected.text);
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason).map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
    for (const chunk of chunks) expect(chunk.usage).toBeUndefined();
    expect(await settled).toEqual(exact);
  });

  it('ends a stream the vendor broke off with an error event, and bills the streamed text by count', async () => {
    const cut = wire.indexOf('message_delta');
    next = streamCase(true, vendorStream(cut));
    const text = await (await fetch(baseUrl)).text();
    const events = eventsOf(text);
    expect(events).not.toContain('[DONE]');
    expect(events.at(-1)).toEqual({
      error: {
        message: 'the upstream answer broke off (request id req-test-1)',
        type: 'server_error',
        param: null,
        code: 'upstream_unreachable',
      },
    });
    const streamed = events
      .slice(0, -1)
      .map((chunk) => chunk.choices[0]?.delta?.content ?? '')
      .join('');
    expect(streamed).toBe(expected.text);
    expect(await settled).toEqual({
      promptTokens: 5,
      completionTokens: countTextTokens(streamed, MODEL),
      cachedPromptTokens: 0,
      estimated: true,
    });
    expect(text).not.toContain(KEY);
  });

  it('streams a whole answer to a client that asked to stream (a vendor that answered whole)', async () => {
    const chat = anthropicAdaptor.decodeChat(
      readFileSync(join(fixtureDir('anthropic'), 'chat.answer.json'), 'utf8'),
      call(false),
    ) as ChatResponse;
    next = { translated: { adaptor: anthropicAdaptor, call: call(true), chat }, options: { streamed: true } };
    const events = eventsOf(await (await fetch(baseUrl)).text());
    expect(events.at(-1)).toBe('[DONE]');
    expect(events[0].choices[0].delta).toMatchObject({ role: 'assistant', content: chat.choices[0].message.content });
    expect(events[1].choices[0].finish_reason).toBe(chat.choices[0].finish_reason);
    expect(await settled).toMatchObject({
      promptTokens: chat.usage.prompt_tokens,
      completionTokens: chat.usage.completion_tokens,
      estimated: false,
    });
  });
});
