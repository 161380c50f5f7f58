// An Azure OpenAI channel (type 3) end to end through the official openai
// SDK: the relay calls the deployment URL (model without dots and snapshot
// suffix) with the channel's api-version and an api-key header, the bytes
// pass as they are, and the bill is exact. A tiny Azure front (in this file)
// checks Azure's URL and header and hands the call on to the OpenAI emulator.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { completionRatioFor, computeQuota, imageQuota } from '../../../server/billing/prices';
import { defaultModelRatio, expectBilled, resetRelay, startRelayHarness, type RelayHarness } from './harness';

interface AzureCall {
  url: string;
  apiKey: string | undefined;
  authorization: string | undefined;
}

let harness: RelayHarness;
let client: OpenAI;
let azure: Server;
let azureUrl: string;
const azureCalls: AzureCall[] = [];
const AZURE_KEY = 'azure-key-0123456789';
const DEPLOYMENTS = new Set(['gpt-35-turbo', 'text-embedding-ada-002', 'dall-e']);

/** Azure's URL shape, checked, then the emulator's answer passed back as it is. */
function startAzureFront(emulatorUrl: string): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://azure.local');
    azureCalls.push({
      url: request.url ?? '',
      apiKey: request.headers['api-key'] as string | undefined,
      authorization: request.headers.authorization,
    });
    const match = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings|images\/generations)$/.exec(url.pathname);
    const fail = (status: number, code: string, message: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code, message } }));
    };
    if (request.headers['api-key'] !== AZURE_KEY) {
      return fail(
        401,
        '401',
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      );
    }
    if (!match || !url.searchParams.get('api-version')) return fail(404, '404', 'Resource not found');
    if (!DEPLOYMENTS.has(match[1])) return fail(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.');
    const { host: _host, 'api-key': _key, ...headers } = request.headers;
    const upstream = httpRequest(
      `${emulatorUrl}/v1/${match[2]}`,
      { method: 'POST', headers: { ...headers, authorization: 'Bearer sk-good' } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  harness = await startRelayHarness();
  client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  azure = await startAzureFront(harness.emulator.baseUrl);
  azureUrl = `http://127.0.0.1:${(azure.address() as AddressInfo).port}`;
});
afterAll(async () => {
  azure.closeAllConnections();
  await new Promise((resolve) => azure.close(resolve));
  await harness.close();
});

let channelId: number;
beforeEach(async () => {
  await resetRelay(harness);
  azureCalls.length = 0;
  channelId = await harness.addChannel({
    type: 3,
    name: 'azure',
    key: AZURE_KEY,
    base_url: azureUrl,
    other: '2024-10-21',
    models: 'gpt-3.5-turbo-0613,text-embedding-ada-002,dall-e',
  });
});

const charge = (model: string, promptTokens: number, completionTokens: number) =>
  computeQuota({ promptTokens, completionTokens, ratio: defaultModelRatio(model), completionRatio: completionRatioFor(model) });

describe('an Azure channel through the openai SDK', () => {
  it('relays a chat to the deployment URL with api-key and bills the usage exactly', async () => {
    const before = await harness.balances();
    const completion = await client.chat.completions.create({
      model: 'gpt-3.5-turbo-0613',
      messages: [{ role: 'user', content: 'hello azure friend' }],
    });
    expect(completion.choices[0].message.content).toBe('word0 word1 word2 word3 word4');
    expect(azureCalls).toEqual([
      { url: '/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-10-21', apiKey: AZURE_KEY, authorization: undefined },
    ]);
    await expectBilled(harness, before, channelId, 'gpt-3.5-turbo-0613', charge('gpt-3.5-turbo-0613', 3, 5), {
      prompt_tokens: 3,
      completion_tokens: 5,
      is_stream: 0,
    });
  });

  it('relays a streamed chat, with the usage the client asked for, billed exactly', async () => {
    const before = await harness.balances();
    const stream = await client.chat.completions.create({
      model: 'gpt-3.5-turbo-0613',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('word0 word1 word2 word3 word4');
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5 });
    expect(azureCalls[0].url).toBe('/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-10-21');
    await expectBilled(harness, before, channelId, 'gpt-3.5-turbo-0613', charge('gpt-3.5-turbo-0613', 4, 5), {
      prompt_tokens: 4,
      completion_tokens: 5,
      is_stream: 1,
    });
  });

  it('relays embeddings and bills their usage', async () => {
    const before = await harness.balances();
    const embeddings = await client.embeddings.create({ model: 'text-embedding-ada-002', input: ['alpha beta', 'gamma'] });
    expect(embeddings.data).toHaveLength(2);
    expect(azureCalls[0].url).toBe('/openai/deployments/text-embedding-ada-002/embeddings?api-version=2024-10-21');
    await expectBilled(harness, before, channelId, 'text-embedding-ada-002', charge('text-embedding-ada-002', 3, 0), {
      prompt_tokens: 3,
      completion_tokens: 0,
    });
  });

  it('serves the legacy /v1/engines/:model/embeddings route at the deployment URL (v0.5.3 built a broken task path)', async () => {
    const response = await harness.post('/v1/engines/text-embedding-ada-002/embeddings', { input: 'alpha beta gamma' });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(1);
    expect(azureCalls.at(-1)!.url).toBe('/openai/deployments/text-embedding-ada-002/embeddings?api-version=2024-10-21');
  });

  it('relays image generation (v0.5.3 could not)', async () => {
    const before = await harness.balances();
    const images = await client.images.generate({ model: 'dall-e', prompt: 'a lighthouse at dusk', n: 2, size: '512x512' });
    expect(images.data).toHaveLength(2);
    expect(azureCalls[0].url).toBe('/openai/deployments/dall-e/images/generations?api-version=2024-10-21');
    await expectBilled(harness, before, channelId, 'dall-e', imageQuota(defaultModelRatio('dall-e'), '512x512', 2));
  });

  it('tests the channel through its adaptor: the deployment URL and api-version, a minimal chat', async () => {
    const root = await harness.admin('GET', `/api/channel/test/${channelId}`);
    expect(root).toMatchObject({ success: true, message: '' });
    expect(azureCalls.at(-1)).toEqual({
      url: '/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-10-21',
      apiKey: AZURE_KEY,
      authorization: undefined,
    });
  });

  it("reads Azure's refusal of the key as a dead key: the channel is disabled and the next one answers", async () => {
    await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
    await harness.app.ctx.options.set('RetryTimes', '1');
    try {
      await harness.app.ctx.db.deleteFrom('abilities').execute();
      await harness.app.ctx.db.deleteFrom('channels').execute();
      const dead = await harness.addChannel({
        type: 3,
        name: 'azure-dead',
        key: 'azure-revoked-key',
        base_url: azureUrl,
        other: '2024-10-21',
        models: 'gpt-3.5-turbo-0613',
        priority: 10,
      });
      const good = await harness.addChannel({ name: 'openai', key: 'sk-good', models: 'gpt-3.5-turbo-0613' });
      const completion = await client.chat.completions.create({ model: 'gpt-3.5-turbo-0613', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.choices[0].message.content).toBe('word0 word1 word2 word3 word4');
      const rows = await harness.app.ctx.db.selectFrom('channels').select(['id', 'status', 'auto_disabled']).orderBy('id').execute();
      expect(rows.map((row) => [row.id, Number(row.status), Number(row.auto_disabled)])).toEqual([
        [dead, 2, 1],
        [good, 1, 0],
      ]);
    } finally {
      await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
    }
  });
});
