// The Vertex AI adaptor: the shared contract over recorded fixtures for a
// Gemini model and for Claude on Vertex, then the service-account exchange
// (a JWT verified with the test key's public half), the URLs a region,
// project and base URL make, Claude's model ids, and failures.
import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_ADAPTORS, adaptorForChannelType } from '../../../server/protocols/upstream';
import { vertexAdaptor, vertexClaudeModel } from '../../../server/protocols/upstream/vertex';
import { isUpstreamFailure, type ChannelConfig, type HttpTarget } from '../../../server/protocols/types';
import { compactJsonKeys, readServiceAccountKey } from '../../../common/serviceAccountKey';
import { keyFitsFormat } from '../../../common/channelTypes';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('vertex', vertexAdaptor);
describeAdaptor('vertex-claude', vertexAdaptor);

const pair = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const account = {
  type: 'service_account',
  project_id: 'proj-from-key',
  private_key_id: 'kid-1',
  private_key: pair.privateKey,
  client_email: 'relay@proj-from-key.iam.gserviceaccount.com',
  token_uri: 'http://127.0.0.1:9/token',
};
const channel: ChannelConfig = { type: 42, key: JSON.stringify(account), baseUrl: '', other: '' };
const targetOf = (config: ChannelConfig, model: string, stream = false): HttpTarget => {
  const result = vertexAdaptor.target(config, callFor('chat', model, stream, config));
  if (isUpstreamFailure(result)) throw new Error(result.message);
  return result;
};

describe('vertex adaptor: the service-account exchange', () => {
  it('is the registered adaptor of type 42', () => {
    expect(UPSTREAM_ADAPTORS.vertex).toBe(vertexAdaptor);
    expect(adaptorForChannelType(42)).toBe(vertexAdaptor);
  });

  it("posts a JWT assertion signed with the key's private key to the key's token_uri", async () => {
    const request = await vertexAdaptor.credential!.request(channel);
    if (isUpstreamFailure(request)) throw new Error(request.message);
    expect(request.url).toBe('http://127.0.0.1:9/token');
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const assertion = form.get('assertion')!;
    expect(decodeProtectedHeader(assertion)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    const { payload } = await jwtVerify(assertion, await importSPKI(pair.publicKey, 'RS256'), {
      issuer: account.client_email,
      audience: account.token_uri,
    });
    expect(payload.scope).toBe('https://www.googleapis.com/auth/cloud-platform');
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(5);
    // another key's public half does not verify it
    const stranger = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    await expect(jwtVerify(assertion, await importSPKI(stranger.publicKey, 'RS256'))).rejects.toThrow();
  });

  it("defaults to Google's token endpoint, and keeps the private key out of the cache key", async () => {
    const { token_uri: _uri, ...withoutUri } = account;
    const request = await vertexAdaptor.credential!.request({ ...channel, key: JSON.stringify(withoutUri) });
    expect(!isUpstreamFailure(request) && request.url).toBe('https://oauth2.googleapis.com/token');
    const cacheKey = vertexAdaptor.credential!.cacheKey(channel);
    expect(cacheKey).not.toContain('PRIVATE');
    expect(cacheKey).not.toContain(account.client_email);
    expect(vertexAdaptor.credential!.cacheKey({ ...channel, key: JSON.stringify({ ...account, private_key_id: 'kid-2' }) })).not.toBe(
      cacheKey,
    );
  });

  it('reads the minted token and its life; invalid_grant is a dead key with its words', () => {
    expect(
      vertexAdaptor.credential!.parse(200, JSON.stringify({ access_token: 'ya29.minted', expires_in: 3599, token_type: 'Bearer' })),
    ).toEqual({
      credential: 'ya29.minted',
      expiresInSeconds: 3599,
    });
    const refused = vertexAdaptor.credential!.parse(
      400,
      JSON.stringify({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }),
    );
    expect(isUpstreamFailure(refused) && refused.deadKey && refused.retryable).toBe(true);
    expect(isUpstreamFailure(refused) && refused.message).toBe(
      'Google refused the service-account token exchange: invalid_grant: Invalid JWT Signature.',
    );
    const busy = vertexAdaptor.credential!.parse(503, 'upstream connect error');
    expect(isUpstreamFailure(busy) && !busy.deadKey && busy.retryable).toBe(true);
    expect(isUpstreamFailure(vertexAdaptor.credential!.parse(200, '{"token_type":"Bearer"}'))).toBe(true);
  });

  it('a key that is not a service-account JSON key fails clearly before any request', async () => {
    const cases: Array<[string, RegExp]> = [
      ['AIzaSy-an-api-key', /not JSON/],
      ['["a"]', /one JSON object/],
      [JSON.stringify({ ...account, type: 'authorized_user' }), /"type" must be "service_account"/],
      [JSON.stringify({ ...account, client_email: '' }), /lacks "client_email"/],
      [JSON.stringify({ ...account, project_id: undefined, private_key: undefined }), /lacks "project_id", "private_key"/],
      [JSON.stringify({ ...account, private_key: 'not a pem' }), /PEM private key/],
      [
        JSON.stringify({ ...account, private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }),
        /cannot be read as an RSA PKCS#8 key/,
      ],
    ];
    for (const [key, words] of cases) {
      const failure = await vertexAdaptor.credential!.request({ ...channel, key });
      expect(isUpstreamFailure(failure), key).toBe(true);
      if (!isUpstreamFailure(failure)) return;
      expect(failure.message).toMatch(/^the Vertex AI channel key is not usable: /);
      expect(failure.message).toMatch(words);
      expect(failure.deadKey).toBe(false);
    }
  });

  it('the channel check on save takes the JSON key file as pasted, over many lines', () => {
    const pasted = JSON.stringify(account, null, 2);
    expect(pasted.split('\n').length).toBeGreaterThan(5);
    const stored = compactJsonKeys(pasted);
    expect(stored).not.toContain('\n');
    expect(readServiceAccountKey(stored)).toMatchObject({ project_id: 'proj-from-key', private_key: pair.privateKey });
    expect(keyFitsFormat(42, stored)).toBe(true);
    expect(keyFitsFormat(42, 'AIzaSy-an-api-key')).toBe(false);
    // two keys as a JSON array: one per line
    expect(compactJsonKeys(JSON.stringify([account, { ...account, project_id: 'p2' }])).split('\n')).toHaveLength(2);
    // not JSON: left for the check to refuse
    expect(compactJsonKeys('plain-key')).toBe('plain-key');
  });
});

describe('vertex adaptor: targets', () => {
  it("sends Gemini models to Google's publisher endpoint in the region, with the bearer token", () => {
    expect(targetOf(channel, 'gemini-2.5-flash').url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-from-key/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    const streamed = targetOf({ ...channel, other: 'europe-west4' }, 'gemini-2.5-pro', true);
    expect(streamed.url).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-from-key/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
    expect(streamed.headers.authorization).toBe('Bearer contract-credential');
    expect(JSON.stringify(streamed)).not.toContain('PRIVATE KEY');
  });

  it("sends Claude to Anthropic's publisher endpoint under its Vertex id; global and a project override in `other`", () => {
    expect(targetOf({ ...channel, other: 'global' }, 'claude-sonnet-4-5', true).url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/proj-from-key/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict',
    );
    expect(targetOf({ ...channel, other: 'us-east5|other-project' }, 'claude-3-5-sonnet-20241022').url).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/other-project/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet-v2@20241022:rawPredict',
    );
  });

  it("a channel's base URL replaces Google's origin, with or without its version", () => {
    expect(targetOf({ ...channel, baseUrl: 'http://127.0.0.1:8123/' }, 'gemini-2.0-flash').url).toBe(
      'http://127.0.0.1:8123/v1/projects/proj-from-key/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent',
    );
    expect(targetOf({ ...channel, baseUrl: 'https://proxy.example.com/vertex/v1' }, 'gemini-2.0-flash').url).toBe(
      'https://proxy.example.com/vertex/v1/projects/proj-from-key/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent',
    );
  });

  it('maps plain Claude names onto Vertex ids and keeps Vertex ids as they are', () => {
    expect(vertexClaudeModel('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet-v2@20241022');
    expect(vertexClaudeModel('claude-3-5-sonnet-20240620')).toBe('claude-3-5-sonnet@20240620');
    expect(vertexClaudeModel('claude-3-haiku-20240307')).toBe('claude-3-haiku@20240307');
    expect(vertexClaudeModel('claude-sonnet-4-20250514')).toBe('claude-sonnet-4@20250514');
    expect(vertexClaudeModel('claude-opus-4-1')).toBe('claude-opus-4-1@20250805');
    expect(vertexClaudeModel('claude-3-7-sonnet@20250219')).toBe('claude-3-7-sonnet@20250219');
  });

  it('refuses a bad region, a call without a token and operations it lacks, without calling the key dead', () => {
    for (const failure of [
      vertexAdaptor.target({ ...channel, other: 'us central/1' }, callFor('chat', 'gemini-2.0-flash', false)),
      vertexAdaptor.target(channel, { ...callFor('chat', 'gemini-2.0-flash', false), credential: undefined }),
      vertexAdaptor.target(channel, callFor('rerank', 'text-embedding-005', false)),
      vertexAdaptor.target(channel, callFor('embeddings', 'claude-sonnet-4-5', false)),
      vertexAdaptor.target({ ...channel, key: 'not json' }, callFor('chat', 'gemini-2.0-flash', false)),
    ]) {
      expect(isUpstreamFailure(failure)).toBe(true);
      expect(isUpstreamFailure(failure) && failure.deadKey).toBe(false);
    }
  });

  it('embeds through the publisher :predict endpoint, dimensions as outputDimensionality, and refuses token arrays', () => {
    const call = callFor('embeddings', 'gemini-embedding-001', false, channel);
    const target = vertexAdaptor.target(channel, call);
    expect(!isUpstreamFailure(target) && target.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-from-key/locations/us-central1/publishers/google/models/gemini-embedding-001:predict',
    );
    expect(JSON.parse(vertexAdaptor.encodeEmbeddings!({ model: 'gemini-embedding-001', input: 'one text' }, call))).toEqual({
      instances: [{ content: 'one text' }],
    });
    expect(() => vertexAdaptor.encodeEmbeddings!({ model: 'gemini-embedding-001', input: [1, 2, 3] }, call)).toThrow(/token arrays/);
    // an error object in the answer is Google's failure; a prediction without statistics counts nothing
    expect(
      vertexAdaptor.decodeEmbeddings!(
        JSON.stringify({ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }),
        call,
      ),
    ).toMatchObject({ status: 429 });
    expect(vertexAdaptor.decodeEmbeddings!(JSON.stringify({ predictions: [{ embeddings: { values: [0.5] } }] }), call)).toMatchObject({
      usage: { prompt_tokens: 0 },
      data: [{ embedding: [0.5] }],
    });
  });
});

describe('vertex adaptor: the Claude body and failures', () => {
  it("puts Vertex's anthropic_version in the body and leaves the model out; Gemini gets Gemini's body", () => {
    const call = callFor('chat', 'claude-sonnet-4-5', true, channel);
    const body = JSON.parse(
      vertexAdaptor.encodeChat(
        { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream: true },
        call,
      ),
    ) as Record<string, unknown>;
    expect(body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 10,
      stream: true,
    });
    const gemini = JSON.parse(
      vertexAdaptor.encodeChat(
        { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] },
        callFor('chat', 'gemini-2.0-flash', false, channel),
      ),
    ) as Record<string, unknown>;
    expect(gemini).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it("401 and 403 in Google's envelope are a dead key; 429 RESOURCE_EXHAUSTED is retryable; a bad request is not", () => {
    const google = (code: number, status: string) => JSON.stringify({ error: { code, message: `${status} words`, status } });
    const unauthenticated = vertexAdaptor.failure(401, google(401, 'UNAUTHENTICATED'));
    expect([unauthenticated.deadKey, unauthenticated.retryable, unauthenticated.message]).toEqual([true, true, 'UNAUTHENTICATED words']);
    expect(vertexAdaptor.failure(403, google(403, 'PERMISSION_DENIED')).deadKey).toBe(true);
    const exhausted = vertexAdaptor.failure(429, google(429, 'RESOURCE_EXHAUSTED'));
    expect([exhausted.deadKey, exhausted.retryable, exhausted.status]).toEqual([false, true, 429]);
    const invalid = vertexAdaptor.failure(400, google(400, 'INVALID_ARGUMENT'));
    expect([invalid.deadKey, invalid.retryable]).toEqual([false, false]);
    // Claude's own refusal keeps Anthropic's classification
    const overloaded = vertexAdaptor.failure(
      529,
      JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    expect([overloaded.deadKey, overloaded.retryable, overloaded.message]).toEqual([false, true, 'Overloaded']);
    // not JSON at all
    const page = vertexAdaptor.failure(502, '<html>Bad Gateway</html>');
    expect(page.message).toBe('Vertex AI answered HTTP 502: <html>Bad Gateway</html>');
    expect(page.retryable).toBe(true);
  });
});
