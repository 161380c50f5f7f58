// The official `openai` SDK against the gateway, one call per relayed
// endpoint, each billed exactly: the user's quota, the token's remaining and
// used quota, the channel's used_quota and the consume log all move by the
// formula's charge for the emulator's usage (one token per word).
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../../common/options';
import { computeQuota, imageQuota } from '../../../server/billing/prices';
import { audioDuration } from '../../../server/protocols/inbound/audioDuration';
import { WHISPER_TOKENS_PER_SECOND } from '../../../server/routes/v1/audio';
import { countInputTokens } from '../../../server/protocols/inbound/tokenCount';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

let harness: RelayHarness;
let client: OpenAI;
let channelId: number;

const MODELS = 'gpt-4,text-davinci-003,text-embedding-ada-002,text-moderation-latest,dall-e,whisper-1,tts-1';
/** tts-1 has no default price; $15 per 1M characters is ratio 7.5 at $0.002 per 1K. */
const TTS_RATIO = 7.5;

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, 'tts-1': TTS_RATIO }));
});
afterAll(() => harness.close());
beforeEach(async () => {
  await resetRelay(harness);
  channelId = await harness.addChannel({ name: 'emu', key: 'sk-good', models: MODELS });
});

interface Expected {
  charge: number;
  model: string;
  promptTokens: number;
  completionTokens: number;
  isStream?: boolean;
}

/** Runs `call` and checks that every balance moved by exactly `expected.charge`, and the log says so. */
async function expectBilled(call: () => Promise<unknown>, expected: (result: any) => Expected) {
  const before = await harness.balances();
  const result = await call();
  const { charge, model, promptTokens, completionTokens, isStream = false } = expected(result);
  expect(charge).toBeGreaterThan(0);
  const after = await harness.balances();
  expect(after.user.quota).toBe(before.user.quota - charge);
  expect(after.user.used_quota).toBe(before.user.used_quota + charge);
  expect(after.user.request_count).toBe(before.user.request_count + 1);
  expect(after.token.remain_quota).toBe(before.token.remain_quota - charge);
  expect(after.token.used_quota).toBe(before.token.used_quota + charge);
  const channel = await harness.app.ctx.db
    .selectFrom('channels')
    .select('used_quota')
    .where('id', '=', channelId)
    .executeTakeFirstOrThrow();
  expect(channel.used_quota).toBe(charge);
  const log = await harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
  expect(log).toMatchObject({
    model_name: model,
    token_name: 'relay',
    quota: charge,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    channel_id: channelId,
    is_stream: isStream ? 1 : 0,
  });
  return result;
}

describe('the openai SDK through the gateway', () => {
  it('chat completion', async () => {
    const completion = await expectBilled(
      () => client.chat.completions.create({ model: 'gpt-4', messages: [{ role: 'user', content: 'hello there friend' }] }),
      () => ({
        charge: computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 }),
        model: 'gpt-4',
        promptTokens: 3,
        completionTokens: 5,
      }),
    );
    expect((completion as OpenAI.ChatCompletion).choices[0].message.content).toBe('word0 word1 word2 word3 word4');
  });

  it('streamed chat completion', async () => {
    const text = await expectBilled(
      async () => {
        const stream = await client.chat.completions.create({
          model: 'gpt-4',
          stream: true,
          messages: [{ role: 'user', content: 'one two three four' }],
        });
        let content = '';
        for await (const chunk of stream) {
          // the usage chunk the gateway asked for on its own is not passed on
          expect(chunk.usage ?? undefined).toBeUndefined();
          content += chunk.choices[0]?.delta?.content ?? '';
        }
        return content;
      },
      () => ({
        charge: computeQuota({ promptTokens: 4, completionTokens: 5, ratio: 15, completionRatio: 2 }),
        model: 'gpt-4',
        promptTokens: 4,
        completionTokens: 5,
        isStream: true,
      }),
    );
    expect(text).toBe('word0 word1 word2 word3 word4');
  });

  it('completion', async () => {
    const completion = await expectBilled(
      () => client.completions.create({ model: 'text-davinci-003', prompt: 'say this please' }),
      () => ({
        charge: computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 10, completionRatio: 1 }),
        model: 'text-davinci-003',
        promptTokens: 3,
        completionTokens: 5,
      }),
    );
    expect((completion as OpenAI.Completion).choices[0].text).toBe('word0 word1 word2 word3 word4');
  });

  it('embeddings', async () => {
    const embeddings = await expectBilled(
      () => client.embeddings.create({ model: 'text-embedding-ada-002', input: ['alpha beta', 'gamma'] }),
      () => ({
        charge: computeQuota({ promptTokens: 3, completionTokens: 0, ratio: 0.05, completionRatio: 1 }),
        model: 'text-embedding-ada-002',
        promptTokens: 3,
        completionTokens: 0,
      }),
    );
    expect((embeddings as OpenAI.CreateEmbeddingResponse).data).toHaveLength(2);
  });

  it('moderations (no upstream usage: the input is counted locally)', async () => {
    const input = 'is this text fine';
    const promptTokens = countInputTokens(input, 'text-moderation-latest');
    const moderation = await expectBilled(
      () => client.moderations.create({ model: 'text-moderation-latest', input }),
      () => ({
        charge: computeQuota({ promptTokens, completionTokens: 0, ratio: 0.1, completionRatio: 1 }),
        model: 'text-moderation-latest',
        promptTokens,
        completionTokens: 0,
      }),
    );
    expect((moderation as OpenAI.ModerationCreateResponse).results[0].flagged).toBe(false);
  });

  it('image generation', async () => {
    const images = await expectBilled(
      () => client.images.generate({ model: 'dall-e', prompt: 'a lighthouse at dusk', n: 2, size: '512x512' }),
      () => ({ charge: imageQuota(8, '512x512', 2), model: 'dall-e', promptTokens: 0, completionTokens: 0 }),
    );
    expect(imageQuota(8, '512x512', 2)).toBe(18000);
    expect((images as OpenAI.ImagesResponse).data).toHaveLength(2);
  });

  it('audio transcription', async () => {
    const audio = Buffer.from(Array.from({ length: 2048 }, (_, index) => (index * 7) % 256));
    const transcription = await expectBilled(
      async () =>
        client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(audio, 'speech.mp3', { type: 'audio/mpeg' }) }),
      () => {
        // whisper-1 bills seconds: these bytes have no header, so they are measured at the leanest speech rate
        const promptTokens = Math.ceil(audioDuration(audio).seconds) * WHISPER_TOKENS_PER_SECOND;
        return {
          charge: computeQuota({ promptTokens, completionTokens: 0, ratio: 10, completionRatio: 1 }),
          model: 'whisper-1',
          promptTokens,
          completionTokens: 0,
        };
      },
    );
    expect((transcription as OpenAI.Audio.Transcription).text).toMatch(/^received \d+ bytes$/);
    const upstream = harness.emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/audio/transcriptions');
    expect(upstream.rawBody.includes(audio)).toBe(true);
  });

  it('audio speech', async () => {
    const input = 'The quick brown fox jumps over the lazy dog.';
    const speech = await expectBilled(
      async () => Buffer.from(await (await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input })).arrayBuffer()),
      () => ({
        charge: computeQuota({ promptTokens: input.length, completionTokens: 0, ratio: TTS_RATIO, completionRatio: 1 }),
        model: 'tts-1',
        promptTokens: input.length,
        completionTokens: 0,
      }),
    );
    expect(speech).toEqual(Buffer.alloc(64, 1));
  });
});
