// Transcriptions billed the way their vendor bills them, and held at that
// amount before the call. The upstream here is size-honest: it reads the
// WAV it receives and bills whisper-1 by its seconds (`usage.seconds`, as
// OpenAI reports it) and gpt-4o-transcribe by audio tokens, ten a second, plus
// its prompt. Before this, a whisper-1 transcription was held at 10 prompt
// tokens plus 4,096 of text and billed by the transcript's tokens, which the
// uploaded audio decides: one request ran a 50,000-quota key to -550,110.
import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { computeQuota } from '../../../server/billing/prices';
import { AUDIO_INPUT_TOKENS_PER_SECOND, WHISPER_TOKENS_PER_SECOND } from '../../../server/routes/v1/audio';
import { multipartForm, wav } from '../../support/audioFiles';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { listenOnLoopback } from '../../support/emulators/types';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('transcription billing');

interface HonestTranscriber {
  baseUrl: string;
  /** Whether answers carry usage (OpenAI's do; a compatible vendor's may not). */
  reportUsage: boolean;
  received: number;
  close(): Promise<void>;
}

/** The seconds of a PCM WAV as its samples say (44-byte header): what a vendor decodes. */
function wavSeconds(file: Buffer): number {
  const channels = file.readUInt16LE(22);
  const rate = file.readUInt32LE(24);
  const bits = file.readUInt16LE(34);
  return (file.length - 44) / (rate * channels * (bits / 8));
}

async function startHonestTranscriber(): Promise<HonestTranscriber> {
  const state = { reportUsage: true, received: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      state.received += 1;
      const body = Buffer.concat(chunks);
      const start = body.indexOf('RIFF');
      const end = body.lastIndexOf('\r\n--');
      const seconds = Math.ceil(wavSeconds(body.subarray(start, end)));
      const model = /name="model"\r\n\r\n([^\r]*)/.exec(body.toString('latin1'))?.[1] ?? '';
      const prompt = /name="prompt"\r\n\r\n([^\r]*)/.exec(body.toString('latin1'))?.[1] ?? '';
      const usage = model.startsWith('whisper')
        ? { type: 'duration', seconds }
        : {
            type: 'tokens',
            input_tokens: seconds * 10 + Buffer.byteLength(prompt),
            output_tokens: 3,
            total_tokens: seconds * 10 + Buffer.byteLength(prompt) + 3,
          };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(state.reportUsage ? { text: 'one two three', usage } : { text: 'one two three' }));
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    baseUrl: listening.baseUrl,
    get reportUsage() {
      return state.reportUsage;
    },
    set reportUsage(value: boolean) {
      state.reportUsage = value;
    },
    get received() {
      return state.received;
    },
    close: () => listening.close(),
  };
}

for (const target of targets) {
  describe.runIf(target.available)(`transcriptions billed as their vendor bills them, on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let upstream: HonestTranscriber;

    beforeAll(async () => {
      database = await target.create();
      upstream = await startHonestTranscriber();
      harness = await startRelayHarness(database.config);
    });
    afterAll(async () => {
      await harness?.close();
      await upstream?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      await resetRelay(harness);
      upstream.reportUsage = true;
      await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ 'whisper-1': 10, 'gpt-4o-transcribe': 1.25 }));
      await harness.app.ctx.options.set('CompletionRatio', JSON.stringify({ 'gpt-4o-transcribe': 4 }));
      const created = await harness.admin('POST', '/api/channel/', {
        type: 1,
        name: 'transcriber',
        key: 'sk-honest',
        base_url: upstream.baseUrl,
        models: 'whisper-1,gpt-4o-transcribe',
        group: 'default',
      });
      expect(created.success, created.message).toBe(true);
    });

    const transcribe = (fields: Record<string, string>, file: Buffer, key = harness.apiKey) => {
      const { body, contentType } = multipartForm(fields, file);
      return fetch(`${harness.baseUrl}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { 'content-type': contentType, authorization: `Bearer ${key}` },
        body,
      });
    };
    const lastLog = async () => {
      await harness.settled();
      return harness.app.ctx.db
        .selectFrom('logs')
        .selectAll()
        .where('type', '=', LogType.consume)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
    };
    const tokenRow = (id: number) =>
      harness.app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    it('whisper-1 by the second: a minute of audio is 60 x 5 tokens at ratio 10, whether the upstream reports the seconds or not', async () => {
      for (const reportUsage of [true, false]) {
        upstream.reportUsage = reportUsage;
        const response = await transcribe({ model: 'whisper-1' }, wav(60));
        expect(response.status).toBe(200);
        expect(((await response.json()) as { text: string }).text).toBe('one two three');
        const log = await lastLog();
        expect(log).toMatchObject({ model_name: 'whisper-1', prompt_tokens: 60 * WHISPER_TOKENS_PER_SECOND, completion_tokens: 0 });
        expect(Number(log.quota)).toBe(60 * WHISPER_TOKENS_PER_SECOND * 10);
        // US$0.006 a minute at 500,000 quota a dollar
        expect(Number(log.quota) / 500_000).toBeCloseTo(0.006, 9);
        expect(log.content).toContain(reportUsage ? '60 s of audio' : '60 s of audio (read from the upload)');
      }
    });

    it("the review's case: audio longer than the balance pays for is refused before it is sent, and one that fits leaves the rest", async () => {
      const created = await harness.admin('POST', '/api/token/', { name: 'whisper small', remain_quota: 20_000 });
      const key = `sk-${created.data.key}`;
      const before = upstream.received;
      // seven minutes cost 21,000: more than the key holds
      const refused = await transcribe({ model: 'whisper-1' }, wav(420), key);
      expect(refused.status).toBe(429);
      await refused.text();
      expect(upstream.received).toBe(before);
      expect(await tokenRow(created.data.id)).toMatchObject({ held_quota: 0 });
      expect(Number((await tokenRow(created.data.id)).remain_quota)).toBe(20_000);
      // six minutes cost 18,000
      const served = await transcribe({ model: 'whisper-1' }, wav(360), key);
      expect(served.status).toBe(200);
      await served.text();
      await harness.settled();
      const token = await tokenRow(created.data.id);
      expect(Number(token.remain_quota)).toBe(2_000);
      expect(Number(token.held_quota)).toBe(0);
    });

    it('gpt-4o-transcribe by tokens: the reported usage is billed exactly; without a report, the audio at ten a second plus the prompt', async () => {
      const fields = { model: 'gpt-4o-transcribe', prompt: 'names: Ada, Grace' };
      const response = await transcribe(fields, wav(30));
      expect(response.status).toBe(200);
      await response.text();
      const reported = await lastLog();
      const input = 30 * 10 + Buffer.byteLength(fields.prompt);
      expect(reported).toMatchObject({ prompt_tokens: input, completion_tokens: 3 });
      expect(Number(reported.quota)).toBe(computeQuota({ promptTokens: input, completionTokens: 3, ratio: 1.25, completionRatio: 4 }));

      upstream.reportUsage = false;
      const estimated = await transcribe(fields, wav(30));
      expect(estimated.status).toBe(200);
      await estimated.text();
      const log = await lastLog();
      // the gateway's own count: the seconds at its rate, and every byte of the form beside the file
      expect(Number(log.prompt_tokens)).toBeGreaterThanOrEqual(30 * AUDIO_INPUT_TOKENS_PER_SECOND + Buffer.byteLength(fields.prompt));
      expect(Number(log.completion_tokens)).toBeGreaterThan(0);
    });
  });
}
