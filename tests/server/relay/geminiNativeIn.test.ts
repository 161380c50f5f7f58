// Gemini's native API in (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse), with the official @google/genai SDK: to a
// Gemini channel the client's bytes pass unchanged, the model written into the
// upstream path (and the answer's bytes come back); to an OpenAI channel the
// request is translated both ways. Each call billed exactly from the
// upstream's usage.
import { ApiError, FinishReason, GoogleGenAI, Type, type Content, type GenerateContentResponse } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countGeminiPromptTokens } from '../../../server/protocols/inbound/geminiNative';
import { countWords } from '../../support/openaiEmulator';
import { GEMINI_CHANNELS, startGeminiEmulator } from '../../support/emulators/gemini';
import type { ProtocolEmulator } from '../../support/emulators/types';
import {
  chargeFor,
  consumeLogCount,
  expectBilled,
  expectBilledTotal,
  expectSettledAfterLeaving,
  lastConsumeLog,
  resetRelay,
  startRelayHarness,
  type RelayHarness,
} from './harness';

const GEMINI = GEMINI_CHANNELS[0];
const MODEL = GEMINI.chatModel;
const GPT = 'gpt-4';

let harness: RelayHarness;
let gemini: ProtocolEmulator;
let ai: GoogleGenAI;
/** The bodies the SDK sent, as bytes (what a passthrough must hand on unchanged). */
const sentBodies: string[] = [];

/** A fetch that keeps what the SDK sends. */
const recordingFetch: typeof fetch = (input, init) => {
  if (typeof init?.body === 'string') sentBodies.push(init.body);
  return fetch(input, init);
};

const clientFor = (apiKey: string, apiVersion?: string) =>
  new GoogleGenAI({ apiKey, httpOptions: { baseUrl: harness.baseUrl, fetch: recordingFetch, ...(apiVersion ? { apiVersion } : {}) } });

beforeAll(async () => {
  harness = await startRelayHarness();
  gemini = await startGeminiEmulator();
  ai = clientFor(harness.apiKey);
});
afterAll(async () => {
  await harness.close();
  await gemini.close();
});
beforeEach(async () => {
  await resetRelay(harness);
});

const addGemini = (fields: Record<string, unknown> = {}) =>
  harness.addChannel({ type: GEMINI.type, name: 'gemini', key: GEMINI.key, base_url: GEMINI.baseUrl(gemini), models: MODEL, ...fields });
const addOpenAi = (key = 'sk-good') => harness.addChannel({ name: 'openai', key, models: GPT });

const charge = chargeFor;

const WEATHER_TOOL = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
    },
  ],
};

async function collect(stream: AsyncGenerator<GenerateContentResponse>): Promise<GenerateContentResponse[]> {
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('Gemini native to a Gemini channel (passthrough)', () => {
  it('passes the client bytes on unchanged to the model in the path, answers the vendor bytes, bills the reported usage', async () => {
    const channelId = await addGemini();
    const before = await harness.balances();
    const response = await ai.models.generateContent({
      model: MODEL,
      contents: 'hello there friend',
      config: { systemInstruction: 'Be brief.', temperature: 0.3, topK: 5, maxOutputTokens: 100, stopSequences: ['END'] },
    });
    expect(response.text).toBe('Hello from Gemini, you said: hello there friend');
    expect(response.candidates?.[0].finishReason).toBe(FinishReason.STOP);
    const sent = gemini.requests.at(-1)!;
    expect(sent.url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI.key);
    // the very bytes the SDK sent
    expect(sent.raw).toBe(sentBodies.at(-1));
    expect(sent.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'hello there friend' }] }],
      generationConfig: { temperature: 0.3, topK: 5, maxOutputTokens: 100, stopSequences: ['END'] },
    });
    const reported = gemini.reported.at(-1)!;
    expect(response.usageMetadata).toMatchObject({
      promptTokenCount: reported.promptTokens,
      candidatesTokenCount: reported.completionTokens,
    });
    await expectBilled(harness, before, channelId, MODEL, charge(MODEL, reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 0,
    });
    expect((await lastConsumeLog(harness)).content).toContain('client protocol gemini');
  });

  it('writes the mapped model into the upstream path, the body unchanged; takes the SDK under apiVersion v1', async () => {
    await addGemini({ models: 'gemini-1.5-flash', model_mapping: JSON.stringify({ 'gemini-1.5-flash': MODEL }) });
    const response = await clientFor(harness.apiKey, 'v1').models.generateContent({ model: 'gemini-1.5-flash', contents: 'hi' });
    expect(response.text).toBe('Hello from Gemini, you said: hi');
    const sent = gemini.requests.at(-1)!;
    expect(sent.url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(sent.raw).toBe(sentBodies.at(-1));
  });

  it('streams the vendor events as they came (to the stream URL) and bills the last event usage', async () => {
    const channelId = await addGemini();
    const before = await harness.balances();
    const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: 'one two three' }));
    expect(gemini.requests.at(-1)!.url).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    expect(gemini.requests.at(-1)!.raw).toBe(sentBodies.at(-1));
    // one event per word, the finish reason and the full usage on the last
    expect(chunks.map((chunk) => chunk.text)).toEqual(['Hello', ' from', ' Gemini,', ' you', ' said:', ' one', ' two', ' three']);
    expect(chunks.slice(0, -1).every((chunk) => chunk.candidates?.[0].finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)!.candidates?.[0].finishReason).toBe(FinishReason.STOP);
    const reported = gemini.reported.at(-1)!;
    expect(chunks.at(-1)!.usageMetadata).toMatchObject({
      promptTokenCount: reported.promptTokens,
      candidatesTokenCount: reported.completionTokens,
    });
    await expectBilled(harness, before, channelId, MODEL, charge(MODEL, reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 1,
    });
  });

  it('answers a functionCall, then takes the functionResponse back (streamed), each call billed at its usage', async () => {
    const channelId = await addGemini();
    const before = await harness.balances();
    const question: Content = { role: 'user', parts: [{ text: 'weather in Paris' }] };
    const first = await ai.models.generateContent({ model: MODEL, contents: [question], config: { tools: [WEATHER_TOOL] } });
    expect(first.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'weather in Paris' } }]);
    const firstReported = gemini.reported.at(-1)!;
    const chunks = await collect(
      await ai.models.generateContentStream({
        model: MODEL,
        contents: [
          question,
          first.candidates![0].content!,
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }] },
        ],
        config: { tools: [WEATHER_TOOL] },
      }),
    );
    expect(gemini.requests.at(-1)!.raw).toBe(sentBodies.at(-1));
    expect(chunks.map((chunk) => chunk.text).join('')).toBe('Hello from Gemini, the tool said: {"forecast":"sunny"}');
    const secondReported = gemini.reported.at(-1)!;
    await expectBilledTotal(harness, before, channelId, charge(MODEL, firstReported) + charge(MODEL, secondReported));
    expect(await lastConsumeLog(harness)).toMatchObject({
      quota: charge(MODEL, secondReported),
      prompt_tokens: secondReported.promptTokens,
      completion_tokens: secondReported.completionTokens,
      is_stream: 1,
    });
  });

  it('passes to a PaLM2 channel (type 11) the same way: PaLM is retired, its keys relay through the Gemini API', async () => {
    const palm = GEMINI_CHANNELS[1];
    expect(palm.type).toBe(11);
    const channelId = await harness.addChannel({
      type: palm.type,
      name: 'palm',
      key: palm.key,
      base_url: palm.baseUrl(gemini),
      models: MODEL,
    });
    const before = await harness.balances();
    const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: 'one two' }));
    expect(chunks.map((chunk) => chunk.text).join('')).toBe('Hello from Gemini, you said: one two');
    expect(gemini.requests.at(-1)!).toMatchObject({ url: `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, raw: sentBodies.at(-1) });
    const reported = gemini.reported.at(-1)!;
    await expectBilled(harness, before, channelId, MODEL, charge(MODEL, reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 1,
    });
  });

  it("answers the vendor's refusal in Google's shape, billing nothing", async () => {
    await addGemini();
    const before = await harness.balances();
    // the emulator refuses a content with no parts; the gateway passes the request as it is
    const error = await ai.models
      .generateContent({ model: MODEL, contents: [{ role: 'user', parts: [] }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect(JSON.parse((error as ApiError).message)).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });
});

describe('Gemini native to an OpenAI channel (translated)', () => {
  it('answers a GenerateContentResponse from a chat completion and bills its usage', async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const response = await ai.models.generateContent({
      model: GPT,
      contents: 'hello there friend',
      config: { systemInstruction: 'Be brief.', temperature: 0.3, topP: 0.9, maxOutputTokens: 100, stopSequences: ['END'] },
    });
    expect(response.text).toBe('word0 word1 word2 word3 word4');
    expect(response.candidates?.[0]).toMatchObject({ finishReason: FinishReason.STOP, content: { role: 'model' } });
    expect(response.modelVersion).toBe(GPT);
    const sent = harness.emulator.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toEqual({
      model: GPT,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there friend' },
      ],
      max_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
    });
    const promptTokens = countWords('Be brief. hello there friend');
    expect(response.usageMetadata).toEqual({ promptTokenCount: promptTokens, candidatesTokenCount: 5, totalTokenCount: promptTokens + 5 });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 0,
    });
    expect((await lastConsumeLog(harness)).content).toContain('client protocol gemini');
  });

  it("streams Gemini's events from the chat chunks, the finish reason and usage on the last, and bills the stream's usage", async () => {
    const channelId = await addOpenAi();
    const before = await harness.balances();
    const chunks = await collect(await ai.models.generateContentStream({ model: GPT, contents: 'one two three' }));
    expect(harness.emulator.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const texts = chunks.map((chunk) => chunk.text ?? '');
    expect(texts).toEqual(['word0', ' word1', ' word2', ' word3', ' word4', '']);
    expect(chunks.slice(0, -1).every((chunk) => chunk.candidates?.[0].finishReason === undefined)).toBe(true);
    const promptTokens = countWords('one two three');
    expect(chunks.at(-1)).toMatchObject({
      candidates: [{ finishReason: FinishReason.STOP }],
      usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: 5, totalTokenCount: promptTokens + 5 },
    });
    await expectBilled(harness, before, channelId, GPT, charge(GPT, { promptTokens, completionTokens: 5 }), {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      is_stream: 1,
    });
  });

  it('turns function declarations and calls into tools and tool_calls, and a functionResponse into the tool message of that call', async () => {
    const channelId = await addOpenAi('sk-tools');
    const before = await harness.balances();
    const question: Content = { role: 'user', parts: [{ text: 'weather in Paris' }] };
    const config = {
      tools: [WEATHER_TOOL],
      toolConfig: { functionCallingConfig: { mode: 'ANY' as never, allowedFunctionNames: ['get_weather'] } },
    };
    const first = await ai.models.generateContent({ model: GPT, contents: [question], config });
    expect(first.functionCalls).toEqual([{ id: expect.any(String), name: 'get_weather', args: { city: 'weather in Paris' } }]);
    expect(first.candidates?.[0].finishReason).toBe(FinishReason.STOP);
    expect(harness.emulator.requests.at(-1)!.body).toEqual({
      model: GPT,
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const firstPrompt = countWords('weather in Paris');

    // streamed: the call comes whole in the closing event, its pieces joined
    const chunks = await collect(await ai.models.generateContentStream({ model: GPT, contents: [question], config }));
    expect(chunks.flatMap((chunk) => chunk.functionCalls ?? [])).toEqual([
      { id: expect.any(String), name: 'get_weather', args: { city: 'weather in Paris' } },
    ]);
    expect(chunks.at(-1)!.functionCalls).toHaveLength(1);

    // the history as a Gemini client replays it: the model's call without its id, the answer by name
    const history: Content[] = [
      question,
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }] },
    ];
    const answer = await ai.models.generateContent({ model: GPT, contents: history, config: { tools: [WEATHER_TOOL] } });
    expect(answer.text).toBe('the tool said: {"forecast":"sunny"}');
    const sent = harness.emulator.requests.at(-1)!.body as {
      messages: Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    };
    const callId = sent.messages[1].tool_calls![0].id;
    expect(sent.messages).toEqual([
      { role: 'user', content: 'weather in Paris' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: callId, content: '{"forecast":"sunny"}' },
    ]);
    const lastPrompt = countWords('weather in Paris {"forecast":"sunny"}');
    const completion = countWords('the tool said: {"forecast":"sunny"}');
    // the calls: 1 token for the call and 1 for its argument
    const total =
      2 * charge(GPT, { promptTokens: firstPrompt, completionTokens: 2 }) +
      charge(GPT, { promptTokens: lastPrompt, completionTokens: completion });
    await expectBilledTotal(harness, before, channelId, total);
    expect(await lastConsumeLog(harness)).toMatchObject({
      prompt_tokens: lastPrompt,
      completion_tokens: completion,
      quota: charge(GPT, { promptTokens: lastPrompt, completionTokens: completion }),
    });
  });
});

describe('Gemini native: keys, paths and refusals', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${harness.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const hello = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };

  it("refuses a bad key with Google's 401 UNAUTHENTICATED, billing nothing and calling no one", async () => {
    await addGemini();
    const before = await harness.balances();
    const requests = gemini.requests.length;
    const error = await clientFor('sk-not-a-key')
      .models.generateContent({ model: MODEL, contents: 'hi' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect(JSON.parse((error as ApiError).message)).toEqual({
      error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' },
    });
    const stream = await clientFor('sk-not-a-key')
      .models.generateContentStream({ model: MODEL, contents: 'hi' })
      .catch((caught: unknown) => caught);
    expect((stream as ApiError).status).toBe(401);
    expect(gemini.requests.length).toBe(requests);
    expect((await harness.balances()).user.quota).toBe(before.user.quota);
  });

  it('takes the key from ?key= and from Authorization: Bearer', async () => {
    await addGemini();
    const byQuery = await post(`/v1beta/models/${MODEL}:generateContent?key=${harness.apiKey}`, hello);
    expect(byQuery.status).toBe(200);
    expect(await byQuery.json()).toMatchObject({ candidates: [{ content: { parts: [{ text: 'Hello from Gemini, you said: hi' }] } }] });
    // the client's key never travels upstream: the channel's does, in the header
    expect(gemini.requests.at(-1)!.url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    const byBearer = await post(`/v1beta/models/${MODEL}:generateContent`, hello, { authorization: `Bearer ${harness.apiKey}` });
    expect(byBearer.status).toBe(200);
  });

  it("answers an unknown method, a stream without alt=sse and a request without contents in Google's shape", async () => {
    await addGemini();
    const key = { 'x-goog-api-key': harness.apiKey };
    const unknown = await post(`/v1beta/models/${MODEL}:predict`, hello, key);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { code: 404, message: expect.stringContaining('predict'), status: 'NOT_FOUND' } });
    const arrayStream = await post(`/v1beta/models/${MODEL}:streamGenerateContent`, hello, key);
    expect(arrayStream.status).toBe(400);
    expect(await arrayStream.json()).toEqual({
      error: { code: 400, message: expect.stringContaining('alt=sse'), status: 'INVALID_ARGUMENT' },
    });
    const empty = await post(`/v1beta/models/${MODEL}:generateContent`, {}, key);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: { code: 400, message: expect.stringContaining('contents'), status: 'INVALID_ARGUMENT' } });
    const broken = await fetch(`${harness.baseUrl}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...key },
      body: '{"contents":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });
});

describe('Gemini native: a client that leaves mid-stream', () => {
  it('is billed for what the Gemini channel streamed before it left (counted), and nothing stays held', async () => {
    const slow = await startGeminiEmulator({ wordDelayMs: 60 });
    try {
      const channelId = await harness.addChannel({
        type: GEMINI.type,
        name: 'slow gemini',
        key: GEMINI.key,
        base_url: GEMINI.baseUrl(slow),
        models: MODEL,
      });
      const before = await harness.balances();
      const logsBefore = await consumeLogCount(harness);
      const said = 'one two three four five six seven eight nine ten eleven twelve';
      const body = { contents: [{ role: 'user', parts: [{ text: said }] }] };
      const leave = new AbortController();
      const response = await fetch(`${harness.baseUrl}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': harness.apiKey },
        body: JSON.stringify(body),
        signal: leave.signal,
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.getReader();
      let seen = '';
      while ((seen.match(/^data: /gm) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
      leave.abort();
      // the vendor would have sent 17 words ("Hello from Gemini, you said: " and the twelve); the gateway settles once it sees the client gone
      const log = await expectSettledAfterLeaving(harness, before, logsBefore);
      expect(log).toMatchObject({ channel_id: channelId, is_stream: 1, prompt_tokens: countGeminiPromptTokens(body, MODEL) });
      expect(log.completion_tokens).toBeGreaterThanOrEqual(3);
      expect(log.completion_tokens).toBeLessThan(17);
    } finally {
      await slow.close();
    }
  });
});
