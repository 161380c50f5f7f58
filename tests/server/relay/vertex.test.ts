// Vertex AI (type 42) end to end: channels created through the channel API
// with a service-account JSON key whose private key the test made, the
// official openai SDK calling Gemini and Claude through the gateway (whole and
// streamed), and the Vertex emulator checking every bearer token against the
// ones its token endpoint minted after verifying the signed assertion. Bills
// are exactly what the vendor reported; one token serves many calls; a key
// Google will not give tokens to disables its channel and costs nothing.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cachedPromptRatioFor, completionRatioFor, computeQuota } from '../../../server/billing/prices';
import { forgetCredentials } from '../../../server/relay/credentials';
import type { ReportedUsage } from '../../support/emulators/types';
import {
  VERTEX_CHANNELS,
  VERTEX_PROJECT,
  startVertexEmulator,
  vertexServiceAccountKey,
  type VertexEmulator,
} from '../../support/emulators/vertex';
import {
  defaultModelRatio,
  expectBilled,
  expectBilledTotal,
  lastConsumeLog,
  resetRelay,
  startRelayHarness,
  type RelayHarness,
} from './harness';

const [GEMINI, CLAUDE] = VERTEX_CHANNELS;

let harness: RelayHarness;
let client: OpenAI;
let vertex: VertexEmulator;

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  vertex = await startVertexEmulator();
});
afterAll(async () => {
  await harness.close();
  await vertex.close();
});
beforeEach(async () => {
  await resetRelay(harness);
  await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
  forgetCredentials();
});

const addVertex = (channel: (typeof VERTEX_CHANNELS)[number], fields: Record<string, unknown> = {}) =>
  harness.addChannel({
    type: 42,
    name: `vertex ${channel.chatModel}`,
    key: channel.keyFor!(vertex),
    base_url: vertex.baseUrl,
    other: channel.other,
    models: channel.chatModel,
    ...fields,
  });

const charge = (model: string, usage: ReportedUsage) =>
  computeQuota({
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    cachedPromptRatio: cachedPromptRatioFor(model),
    ratio: defaultModelRatio(model),
    completionRatio: completionRatioFor(model),
  });

/** The model calls the emulator was sent (not the token requests). */
const modelCalls = () => vertex.requests.filter((request) => request.url !== '/token');

async function streamed(model: string, content: string) {
  const stream = await client.chat.completions.create({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content }],
  });
  let text = '';
  let finishes = 0;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      if (choice.finish_reason) finishes += 1;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, finishes, usage };
}

describe('a Vertex AI channel through the openai SDK', () => {
  it("answers a Gemini model from Google's publisher endpoint with the minted token, billed as reported", async () => {
    const channelId = await addVertex(GEMINI);
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: GEMINI.chatModel,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello vertex gemini' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Gemini, you said: hello vertex gemini');
    expect(completion.choices[0].finish_reason).toBe('stop');
    const call = modelCalls().at(-1)!;
    expect(call.url).toBe(`/v1/projects/${VERTEX_PROJECT}/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent`);
    expect(call.headers.authorization).toMatch(/^Bearer ya29\.emulator-\d+-/);
    expect(JSON.stringify(call.headers)).not.toMatch(/PRIVATE KEY|x-goog-api-key/i);
    const reported = vertex.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, GEMINI.chatModel, charge(GEMINI.chatModel, reported), {
      prompt_tokens: reported.promptTokens,
      completion_tokens: reported.completionTokens,
      is_stream: 0,
    });
  });

  it('streams a Gemini answer with usage and bills it exactly', async () => {
    const channelId = await addVertex(GEMINI);
    const before = await harness.balances();
    const { text, finishes, usage } = await streamed(GEMINI.chatModel, 'stream from vertex please');
    expect(text).toBe('Hello from Gemini, you said: stream from vertex please');
    expect(finishes).toBe(1);
    expect(modelCalls().at(-1)!.url).toMatch(/publishers\/google\/models\/gemini-2\.0-flash:streamGenerateContent\?alt=sse$/);
    const reported = vertex.reported.at(-1)!;
    expect(usage).toMatchObject({ prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens });
    await expectBilled(harness, before, channelId, GEMINI.chatModel, charge(GEMINI.chatModel, reported), { is_stream: 1 });
  });

  it("answers Claude from Anthropic's publisher endpoint under its Vertex id, whole and streamed, billed under the plain name", async () => {
    const channelId = await addVertex(CLAUDE);
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: CLAUDE.chatModel,
      messages: [{ role: 'user', content: 'hello vertex claude' }],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Anthropic, you said: hello vertex claude');
    const whole = modelCalls().at(-1)!;
    expect(whole.url).toBe(
      `/v1/projects/${VERTEX_PROJECT}/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict`,
    );
    expect(whole.body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      messages: [{ role: 'user', content: 'hello vertex claude' }],
    });
    expect(whole.body).not.toHaveProperty('model');
    const first = vertex.reported.at(-1)!;
    expect(completion.usage).toMatchObject({ prompt_tokens: first.promptTokens, completion_tokens: first.completionTokens });
    await expectBilled(harness, before, channelId, CLAUDE.chatModel, charge(CLAUDE.chatModel, first), { is_stream: 0 });

    const { text, finishes, usage } = await streamed(CLAUDE.chatModel, 'stream claude on vertex');
    expect(text).toBe('Hello from Anthropic, you said: stream claude on vertex');
    expect(finishes).toBe(1);
    expect(modelCalls().at(-1)!.url).toMatch(/claude-3-5-haiku@20241022:streamRawPredict$/);
    const second = vertex.reported.at(-1)!;
    expect(usage).toMatchObject({ prompt_tokens: second.promptTokens, completion_tokens: second.completionTokens });
    await expectBilledTotal(harness, before, channelId, charge(CLAUDE.chatModel, first) + charge(CLAUDE.chatModel, second));
  });

  it('mints one token for a key and reuses it across calls, channels and concurrent first calls', async () => {
    await addVertex(GEMINI);
    await addVertex(CLAUDE);
    const minted = vertex.tokenRequests;
    // five calls at once before any token is cached: one exchange, shared
    await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: `at once ${index}` }] }),
      ),
    );
    await client.chat.completions.create({ model: CLAUDE.chatModel, messages: [{ role: 'user', content: 'and claude' }] });
    await streamed(GEMINI.chatModel, 'and a stream');
    expect(vertex.tokenRequests - minted).toBe(1);
    const tokens = new Set(
      modelCalls()
        .slice(-7)
        .map((request) => request.headers.authorization),
    );
    expect(tokens.size).toBe(1);
  });

  it('a cached token Vertex refuses with 401 is dropped: the same call mints a fresh one and answers, billed once, the channel kept', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    const channelId = await addVertex(GEMINI);
    await client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: 'first call mints' }] });
    const firstToken = modelCalls().at(-1)!.headers.authorization;
    const minted = vertex.tokenRequests;
    // the token is revoked long before its hour is up
    expect(vertex.revokeMinted()).toBeGreaterThan(0);
    const before = await harness.balances();
    const callsBefore = modelCalls().length;
    const completion = await client.chat.completions.create({
      model: GEMINI.chatModel,
      messages: [{ role: 'user', content: 'after the revocation' }],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Gemini, you said: after the revocation');
    // the revoked token was tried once and refused, then one new token was minted and the call sent again with it
    const sent = modelCalls().slice(callsBefore);
    expect(sent.map((request) => request.headers.authorization)).toEqual([firstToken, expect.not.stringMatching(firstToken!)]);
    expect(vertex.tokenRequests - minted).toBe(1);
    // billed once, at what the answer reported (the refused try costs nothing)
    const reported = vertex.reported.at(-1)!;
    const after = await harness.balances();
    expect(before.user.quota - after.user.quota).toBe(charge(GEMINI.chatModel, reported));
    expect(before.token.remain_quota - after.token.remain_quota).toBe(charge(GEMINI.chatModel, reported));
    expect(await lastConsumeLog(harness)).toMatchObject({
      quota: charge(GEMINI.chatModel, reported),
      channel_id: channelId,
      prompt_tokens: reported.promptTokens,
    });
    const channel = await harness.app.ctx.db.selectFrom('channels').select('status').where('id', '=', channelId).executeTakeFirstOrThrow();
    expect(channel.status).toBe(1);

    // the fresh token is cached in its place: a stream needs no new one
    const { text } = await streamed(GEMINI.chatModel, 'and a stream after');
    expect(text).toBe('Hello from Gemini, you said: and a stream after');
    expect(vertex.tokenRequests - minted).toBe(1);
    expect(modelCalls().at(-1)!.headers.authorization).toBe(sent[1].headers.authorization);
  });

  it('a streamed call whose cached token was revoked answers from a fresh one too', async () => {
    await addVertex(CLAUDE);
    await client.chat.completions.create({ model: CLAUDE.chatModel, messages: [{ role: 'user', content: 'mint one' }] });
    vertex.revokeMinted();
    const minted = vertex.tokenRequests;
    const { text, finishes } = await streamed(CLAUDE.chatModel, 'stream after revocation');
    expect(text).toBe('Hello from Anthropic, you said: stream after revocation');
    expect(finishes).toBe(1);
    expect(vertex.tokenRequests - minted).toBe(1);
  });

  it('a fresh token refused too is not retried again: the call fails once more, costs nothing, and the next call starts from a new token', async () => {
    const channelId = await addVertex(GEMINI);
    await client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: 'mint one' }] });
    const minted = vertex.tokenRequests;
    const callsBefore = modelCalls().length;
    const before = await harness.balances();
    const usedBefore = (
      await harness.app.ctx.db.selectFrom('channels').select('used_quota').where('id', '=', channelId).executeTakeFirstOrThrow()
    ).used_quota;
    vertex.refuseAllTokens = true;
    try {
      const refused = await harness.post('/v1/chat/completions', {
        model: GEMINI.chatModel,
        messages: [{ role: 'user', content: 'refused' }],
      });
      expect(refused.status).toBe(502);
      // the cached token, then one fresh token: two model calls and one mint, no loop
      expect(modelCalls().length - callsBefore).toBe(2);
      expect(vertex.tokenRequests - minted).toBe(1);
    } finally {
      vertex.refuseAllTokens = false;
    }
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    const channel = await harness.app.ctx.db
      .selectFrom('channels')
      .select('used_quota')
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(channel.used_quota).toBe(usedBefore);
    // and the token minted for the retry was dropped too: the next call mints anew and answers
    await client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: 'accepted again' }] });
    expect(vertex.tokenRequests - minted).toBe(2);
  });

  it('embeds through the :predict endpoint with the minted token, several inputs and a dimension, billed at the tokens Vertex counted', async () => {
    const channelId = await harness.addChannel({
      type: 42,
      name: 'vertex embeddings',
      key: GEMINI.keyFor!(vertex),
      base_url: vertex.baseUrl,
      other: GEMINI.other,
      models: 'text-embedding-005,text-multilingual-embedding-002',
    });
    const before = await harness.balances();
    const embedded = await client.embeddings.create({
      model: 'text-multilingual-embedding-002',
      input: ['the first text here', 'and a second one'],
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(embedded.data.map((item) => item.index)).toEqual([0, 1]);
    expect(embedded.data.every((item) => item.embedding.length === 16)).toBe(true);
    const call = modelCalls().at(-1)!;
    expect(call.url).toBe(
      `/v1/projects/${VERTEX_PROJECT}/locations/us-central1/publishers/google/models/text-multilingual-embedding-002:predict`,
    );
    expect(call.headers.authorization).toMatch(/^Bearer ya29\.emulator-/);
    expect(call.body).toEqual({
      instances: [{ content: 'the first text here' }, { content: 'and a second one' }],
      parameters: { outputDimensionality: 16 },
    });
    // four words and four words: the summed token_count
    expect(vertex.reported.at(-1)).toEqual({ promptTokens: 8, completionTokens: 0, cachedPromptTokens: 0 });
    expect(embedded.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    await expectBilled(
      harness,
      before,
      channelId,
      'text-multilingual-embedding-002',
      charge('text-multilingual-embedding-002', vertex.reported.at(-1)!),
      { prompt_tokens: 8, completion_tokens: 0 },
    );
  });

  it('the emulator takes no token it did not mint', async () => {
    const forged = await fetch(
      `${vertex.baseUrl}/v1/projects/${VERTEX_PROJECT}/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ya29.forged' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      },
    );
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
  });

  it('a key Google refuses tokens to (invalid_grant) disables its channel, costs nothing, and the next channel answers', async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    await harness.app.ctx.options.set('RetryTimes', '1');
    const refusedBefore = vertex.refusedAssertions;
    const dead = await addVertex(GEMINI, { name: 'vertex-dead', key: GEMINI.deadKeyFor!(vertex), priority: 10 });
    const good = await addVertex(GEMINI, { name: 'vertex-good' });
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: GEMINI.chatModel,
      messages: [{ role: 'user', content: 'who answers' }],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Gemini, you said: who answers');
    expect(vertex.refusedAssertions - refusedBefore).toBe(1);
    const rows = await harness.app.ctx.db.selectFrom('channels').select(['id', 'status', 'auto_disabled']).orderBy('id').execute();
    expect(rows.map((row) => [row.id, Number(row.status), Number(row.auto_disabled)])).toEqual([
      [dead, 2, 1],
      [good, 1, 0],
    ]);
    await expectBilled(harness, before, good, GEMINI.chatModel, charge(GEMINI.chatModel, vertex.reported.at(-1)!));
  });

  it('alone, a refused key is an upstream failure to the client, with nothing of the key in it, and the balance does not move', async () => {
    await addVertex(GEMINI, { key: GEMINI.deadKeyFor!(vertex) });
    const before = await harness.balances();
    const error = await client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: 'anyone' }] }).then(
      () => undefined,
      (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    // the vendor's words stay with the operator (the relay never hands a client an upstream's account details)
    expect(error!.status).toBe(502);
    expect(error!.message).not.toMatch(/PRIVATE KEY|invalid_grant|client_email|gserviceaccount/);
    const after = await harness.balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
  });
});

describe("a Vertex AI channel's test from the console", () => {
  it("tests a Gemini and a Claude channel with a minted token, and shows the admin the token endpoint's refusal without the key", async () => {
    const gemini = await addVertex(GEMINI);
    const claude = await addVertex(CLAUDE);
    expect(await harness.admin('GET', `/api/channel/test/${gemini}`)).toMatchObject({ success: true, model: GEMINI.chatModel });
    expect(await harness.admin('GET', `/api/channel/test/${claude}`)).toMatchObject({ success: true, model: CLAUDE.chatModel });
    expect(modelCalls().at(-1)!.url).toMatch(/publishers\/anthropic\/models\/claude-3-5-haiku@20241022:rawPredict$/);
    const dead = await addVertex(GEMINI, { name: 'vertex-dead', key: GEMINI.deadKeyFor!(vertex) });
    const refused = (await harness.admin('GET', `/api/channel/test/${dead}`)) as { success: boolean; message: string };
    expect(refused.success).toBe(false);
    expect(refused.message).toContain('Google refused the service-account token exchange: invalid_grant: Invalid JWT Signature.');
    expect(refused.message).not.toContain('PRIVATE KEY');
  });
});

describe('a Vertex AI key on the channel API', () => {
  it('takes the JSON key file pasted over many lines as one key, stored on one line', async () => {
    const pasted = JSON.stringify(JSON.parse(vertexServiceAccountKey(vertex)), null, 2);
    const id = await addVertex(GEMINI, { key: pasted });
    const rows = await harness.app.ctx.db.selectFrom('channels').select(['id', 'key']).execute();
    expect(rows.map((row) => row.id)).toEqual([id]);
    expect(rows[0].key).not.toContain('\n');
    expect(JSON.parse(rows[0].key)).toEqual(JSON.parse(pasted));
    // and it works
    const completion = await client.chat.completions.create({
      model: GEMINI.chatModel,
      messages: [{ role: 'user', content: 'pasted key' }],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Gemini, you said: pasted key');
  });

  it('holds several key files in one multi-key channel (a JSON array of them), each minting its own token', async () => {
    const first = vertexServiceAccountKey(vertex);
    const second = JSON.stringify({ ...(JSON.parse(first) as Record<string, unknown>), universe_domain: 'googleapis.com' });
    const id = await addVertex(GEMINI, {
      key: JSON.stringify([JSON.parse(first), JSON.parse(second)], null, 2),
      multi_key: true,
      key_strategy: 'round_robin',
    });
    const keys = await harness.app.ctx.db.selectFrom('channel_keys').select('key').where('channel_id', '=', id).orderBy('id').execute();
    expect(keys.map((row) => JSON.parse(row.key) as unknown)).toEqual([JSON.parse(first), JSON.parse(second)]);
    const minted = vertex.tokenRequests;
    for (const word of ['one', 'two', 'three', 'four'])
      await client.chat.completions.create({ model: GEMINI.chatModel, messages: [{ role: 'user', content: word }] });
    expect(vertex.tokenRequests - minted).toBe(2);
    expect(
      new Set(
        modelCalls()
          .slice(-4)
          .map((request) => request.headers.authorization),
      ).size,
    ).toBe(2);
  });

  it('refuses a key that is not a service-account JSON key file, saying what is wrong', async () => {
    await expect(addVertex(GEMINI, { key: 'AIzaSy-not-a-key-file' })).rejects.toThrow(
      "the key must be the service account's JSON key file (it is not JSON)",
    );
    const noEmail = { ...(JSON.parse(vertexServiceAccountKey(vertex)) as Record<string, unknown>), client_email: undefined };
    await expect(addVertex(GEMINI, { key: JSON.stringify(noEmail) })).rejects.toThrow('the service-account key lacks "client_email"');
    expect(await harness.app.ctx.db.selectFrom('channels').select('id').execute()).toEqual([]);
  });
});
