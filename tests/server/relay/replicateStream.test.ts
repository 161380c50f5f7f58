// Replicate streamed for real, end to end through the gateway with the
// official `openai` SDK: the prediction is created with `stream: true`, its
// event stream followed as it comes, the prediction fetched once afterwards
// for its token counts; what is billed when those cannot be had, when the
// stream is cut, and a stream URL the gateway refuses to follow.
import { createServer, type IncomingMessage } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { INBOUND_CODECS } from '../../../server/protocols/inbound';
import { countTextTokens } from '../../../server/protocols/inbound/tokenCount';
import { REPLICATE_CHANNELS, REPLICATE_PIECE_PAUSE_MS, startReplicateEmulator } from '../../support/emulators/replicate';
import { listenOnLoopback, type ProtocolEmulator } from '../../support/emulators/types';
import { consumeLogCount, expectBilled, expectSettledAfterLeaving, useRelayHarness } from './harness';

const harnessOf = useRelayHarness();
const LLAMA = REPLICATE_CHANNELS[0].chatModel;
const LLAMA_RATIO = 0.025;

let replicate: ProtocolEmulator;
/** An origin the emulator names as the stream's when told to: the gateway must never call it. */
let trap: { baseUrl: string; close(): Promise<void>; hits: IncomingMessage[] };
let misdirected: ProtocolEmulator;

beforeAll(async () => {
  replicate = await startReplicateEmulator();
  const hits: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    hits.push(request);
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    response.end('event: output\ndata: secret internal data\n\nevent: done\ndata: {}\n\n');
  });
  trap = { ...(await listenOnLoopback(server)), hits };
  misdirected = await startReplicateEmulator({ streamUrl: (id) => `${trap.baseUrl}/v1/streams/${id}` });
});
afterAll(() => Promise.all([replicate.close(), misdirected.close(), trap.close()]));

const priced = () => harnessOf().app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, [LLAMA]: LLAMA_RATIO }));
const client = () => new OpenAI({ apiKey: harnessOf().apiKey, baseURL: `${harnessOf().baseUrl}/v1`, maxRetries: 0 });
const addReplicate = (emulator = replicate) =>
  harnessOf().addChannel({
    name: 'replicate',
    type: 46,
    key: REPLICATE_CHANNELS[0].key,
    base_url: emulator.baseUrl,
    models: LLAMA,
    other: '',
  });
const chargeOf = (usage: { promptTokens: number; completionTokens: number }) =>
  computeQuota({ ...usage, cachedPromptTokens: 0, cachedPromptRatio: 1, ratio: LLAMA_RATIO, completionRatio: completionRatioFor(LLAMA) });

describe('Replicate streamed', () => {
  it('relays the prediction’s events as they come, and bills the counts of the prediction fetched afterwards', async () => {
    await priced();
    const channelId = await addReplicate();
    const before = await harnessOf().balances();
    const asked = replicate.requests.length;
    const started = Date.now();
    const stream = await client().chat.completions.create({
      model: LLAMA,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'tell me about llamas' }],
    });
    const pieces: Array<{ text: string; at: number }> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) pieces.push({ text: delta, at: Date.now() - started });
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    const ended = Date.now() - started;
    expect(pieces.map((piece) => piece.text).join('')).toBe('Hello from Replicate, you said: tell me about llamas');
    // one piece per word, each as the emulator sent it: the first long before the stream's end
    expect(pieces.length).toBe(9);
    expect(ended - pieces[0].at).toBeGreaterThanOrEqual(REPLICATE_PIECE_PAUSE_MS * 6);
    expect(finish).toBe('stop');

    const sent = replicate.requests.slice(asked);
    expect(sent.map((request) => `${request.method} ${request.url.replace(/emulated\w+/, 'ID')}`)).toEqual([
      `POST /v1/models/${LLAMA}/predictions`,
      'GET /v1/streams/ID',
      'GET /v1/predictions/ID',
    ]);
    expect(sent[0].headers.prefer).toBeUndefined();
    expect(sent[0].body).toEqual({ input: { prompt: 'tell me about llamas' }, stream: true });
    expect(sent[1].headers).toMatchObject({ authorization: `Bearer ${REPLICATE_CHANNELS[0].key}`, accept: 'text/event-stream' });

    const reported = replicate.reported.at(-1)!;
    expect(reported).toEqual({ promptTokens: 4, completionTokens: 9, cachedPromptTokens: 0 });
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 9 });
    await harnessOf().settled();
    await expectBilled(harnessOf(), before, channelId, LLAMA, chargeOf(reported), { prompt_tokens: 4, completion_tokens: 9 });
  });

  it('bills the gateway’s own count when the prediction cannot be fetched after the stream', async () => {
    await priced();
    const channelId = await addReplicate();
    const before = await harnessOf().balances();
    const body = {
      model: LLAMA,
      stream: true as const,
      stream_options: { include_usage: true },
      messages: [{ role: 'user' as const, content: 'nometrics please' }],
    };
    const stream = await client().chat.completions.create(body);
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from Replicate, you said: nometrics please');
    // the prompt as the OpenAI codec counts it, the answer by the model's tokenizer
    const own = {
      promptTokens: INBOUND_CODECS.openai.promptTokens('chat', body, LLAMA, {}),
      completionTokens: countTextTokens(text, LLAMA),
    };
    // the two counts differ, so the bill says which one it is
    expect(own).not.toEqual({
      promptTokens: replicate.reported.at(-1)!.promptTokens,
      completionTokens: replicate.reported.at(-1)!.completionTokens,
    });
    expect(usage).toMatchObject({ prompt_tokens: own.promptTokens, completion_tokens: own.completionTokens });
    await harnessOf().settled();
    await expectBilled(harnessOf(), before, channelId, LLAMA, chargeOf(own), {
      prompt_tokens: own.promptTokens,
      completion_tokens: own.completionTokens,
    });
  });

  it('a stream the upstream cuts mid-way ends with an error event, bills what was sent, and holds nothing', async () => {
    await priced();
    await addReplicate();
    const before = await harnessOf().balances();
    const logsBefore = await consumeLogCount(harnessOf());
    const response = await harnessOf().post('/v1/chat/completions', {
      model: LLAMA,
      stream: true,
      messages: [{ role: 'user', content: 'cut this answer short' }],
    });
    expect(response.status).toBe(200);
    const wire = await response.text();
    const contents = wire
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)) as { choices?: Array<{ delta: { content?: string } }>; error?: { code: string } });
    // the three pieces before the cut reached the client, then the gateway's error
    expect(
      contents
        .flatMap((event) => event.choices ?? [])
        .map((choice) => choice.delta.content)
        .join(''),
    ).toBe('Hello from Replicate,');
    expect(contents.at(-1)?.error?.code).toBe('upstream_unreachable');
    expect(wire).not.toContain('[DONE]');
    const log = await expectSettledAfterLeaving(harnessOf(), before, logsBefore);
    expect(log.quota).toBeGreaterThan(0);
    expect(log.completion_tokens).toBe(countTextTokens('Hello from Replicate,', LLAMA));
  });

  it('refuses to follow a stream URL outside Replicate and the channel’s own origin: nothing is fetched there, nothing billed', async () => {
    await priced();
    const channelId = await addReplicate(misdirected);
    const before = await harnessOf().balances();
    const refused = await harnessOf().post('/v1/chat/completions', {
      model: LLAMA,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(refused.status).toBe(502);
    const error = ((await refused.json()) as { error: { message: string } }).error;
    expect(error.message).not.toContain(trap.baseUrl);
    expect(trap.hits).toHaveLength(0);
    await harnessOf().settled();
    const after = await harnessOf().balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    const channel = await harnessOf()
      .app.ctx.db.selectFrom('channels')
      .select('used_quota')
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(channel.used_quota).toBe(0);
  });

  it('a whole answer still waits for the finished prediction (sync mode), one request', async () => {
    await priced();
    await addReplicate();
    const asked = replicate.requests.length;
    const completion = await client().chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'hello there' }] });
    expect(completion.choices[0].message.content).toBe('Hello from Replicate, you said: hello there');
    expect(replicate.requests.slice(asked).map((request) => request.method)).toEqual(['POST']);
    expect(replicate.requests.at(-1)!.headers.prefer).toBe('wait=60');
  });
});
