// The output limit of every client protocol is checked as chat's max_tokens
// is: an integer from 0 to MAX_TOKENS_LIMIT, else a 400 in the client's own
// error shape before anything is reserved. A limit past what a bigint column
// holds (2^63) once reached the reservation and answered 500 on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { MAX_TOKENS_LIMIT } from '../../../server/relay/requestFields';
import { startRelayHarness, type RelayHarness } from './harness';

const targets = (await databaseTargets('output limit fields')).filter((target) => target.name !== 'mysql');

/** Served by an OpenAI (type 1) channel: Responses passes to it as bytes. */
const GPT_RESPONSES = 'gpt-4o';
const BAD_LIMITS: Array<[string, unknown]> = [
  ['negative', -1],
  ['a string', '100'],
  ['fractional', 10.5],
  ['1e308', 1e308],
  ['2^63', 2 ** 63],
  ['one past the limit', MAX_TOKENS_LIMIT + 1],
];

for (const target of targets) {
  describe.runIf(target.available)(`output limits on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await harness.addChannel({ name: 'openai', key: 'sk-good', models: 'gpt-4' });
      await harness.addChannel({ type: 1, name: 'openai-own', key: 'sk-good', base_url: harness.emulator.baseUrl, models: GPT_RESPONSES });
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const ledgerUntouched = async () => {
      await harness.settled();
      const held = await harness.app.ctx.db
        .selectFrom('tokens')
        .select(['held_quota', 'remain_quota'])
        .where('id', '=', harness.tokenId)
        .executeTakeFirstOrThrow();
      expect(Number(held.held_quota)).toBe(0);
      expect(Number(held.remain_quota)).toBe(10_000_000);
    };

    it('refuses a bad max_output_tokens on /v1/responses with an OpenAI-shaped 400 naming the field', async () => {
      for (const [name, limit] of BAD_LIMITS) {
        const response = await harness.post('/v1/responses', { model: GPT_RESPONSES, input: 'hi', max_output_tokens: limit });
        const body = (await response.json()) as { error: unknown };
        expect(response.status, name).toBe(400);
        expect(body.error, name).toMatchObject({
          type: 'invalid_request_error',
          param: 'max_output_tokens',
          message: `max_output_tokens must be an integer from 0 to ${MAX_TOKENS_LIMIT}`,
        });
      }
      await ledgerUntouched();
    });

    it('refuses what chat refuses in max_tokens, the same way', async () => {
      for (const [name, limit] of BAD_LIMITS) {
        const response = await harness.post('/v1/chat/completions', {
          model: 'gpt-4',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: limit,
        });
        expect(response.status, name).toBe(400);
        expect(((await response.json()) as { error: unknown }).error, name).toMatchObject({ param: 'max_tokens' });
      }
    });

    it("refuses a bad max_tokens on /v1/messages in Anthropic's error shape", async () => {
      for (const [name, limit] of BAD_LIMITS) {
        const response = await harness.post(
          '/v1/messages',
          { model: 'gpt-4', max_tokens: limit, messages: [{ role: 'user', content: 'hi' }] },
          harness.apiKey,
          { 'anthropic-version': '2023-06-01' },
        );
        expect(response.status, name).toBe(400);
        expect(await response.json(), name).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') },
        });
      }
      await ledgerUntouched();
    });

    it("refuses a bad generationConfig.maxOutputTokens on the Gemini API in Google's error shape", async () => {
      for (const [name, limit] of BAD_LIMITS) {
        const response = await fetch(`${harness.baseUrl}/v1beta/models/gpt-4:generateContent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': harness.apiKey },
          body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: limit } }),
        });
        expect(response.status, name).toBe(400);
        expect(await response.json(), name).toMatchObject({
          error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('max_output_tokens') },
        });
      }
      await ledgerUntouched();
    });

    it('takes a limit in range and passes it on', async () => {
      const response = await harness.post('/v1/responses', { model: GPT_RESPONSES, input: 'hi', max_output_tokens: 100 });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(harness.emulator.requests.at(-1)).toMatchObject({ path: '/v1/responses', body: { max_output_tokens: 100 } });
    });
  });
}
