// A loopback stand-in for Google Vertex AI: Google's OAuth token endpoint for
// service accounts, and the publisher model endpoints for Gemini
// (generateContent, streamGenerateContent?alt=sse) and Claude (rawPredict,
// streamRawPredict).
// References: https://developers.google.com/identity/protocols/oauth2/service-account#httprest,
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference,
// https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude
//
// - The token endpoint (POST /token) verifies the JWT assertion with the test
//   service account's public key (jose's jwtVerify: RS256, issuer, audience
//   = this endpoint, the cloud-platform scope) and mints an access token; a
//   signature by any other key is Google's 400 invalid_grant "Invalid JWT
//   Signature.", an unknown account its invalid_grant too. `tokenRequests`
//   counts the mints.
// - The model endpoints take only a minted token not revoked since
//   (`revokeMinted`, or all refused while `refuseAllTokens`; else 401
//   UNAUTHENTICATED) and only the account's project (else 403 PERMISSION_DENIED). Claude's body
//   must carry `anthropic_version: "vertex-2023-10-16"` and no `model`, and
//   ask for a stream exactly when the method streams.
// - Google's text embedding models answer `:predict` here, a token per word.
// - The answers themselves come from the Gemini and Anthropic emulators (the
//   request is handed on in those vendors' own form), so usage is reported as
//   they report it; `reported` holds it per answered call.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { importSPKI, jwtVerify } from 'jose';
import { ANTHROPIC_GOOD_KEY, startAnthropicEmulator } from './anthropic';
import { GEMINI_CHANNELS, startGeminiEmulator } from './gemini';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

const pemPair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

/** The test's service account: the emulator knows its public key only. */
const ACCOUNT = {
  email: 'relay@switchboard-emulator.iam.gserviceaccount.com',
  project: 'switchboard-emulator',
  keyId: 'emulator-key-1',
  ...pemPair(),
};
/** A key the account never had: its assertions are refused. */
const STRANGER = pemPair();

/** The service-account JSON key file a channel stores, minting at this emulator's token endpoint. */
export function vertexServiceAccountKey(emulator: ProtocolEmulator, options: { stranger?: boolean; project?: string } = {}): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: options.project ?? ACCOUNT.project,
    private_key_id: ACCOUNT.keyId,
    private_key: options.stranger ? STRANGER.privateKey : ACCOUNT.privateKey,
    client_email: ACCOUNT.email,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: `${emulator.baseUrl}/token`,
  });
}

export const VERTEX_PROJECT = ACCOUNT.project;

/** A channel of the test's service account, in a region, for a model. */
const vertexChannel = (other: string, chatModel: string): EmulatedChannel => ({
  type: 42,
  key: '',
  deadKey: '',
  keyFor: (emulator) => vertexServiceAccountKey(emulator),
  deadKeyFor: (emulator) => vertexServiceAccountKey(emulator, { stranger: true }),
  baseUrl: (emulator) => emulator.baseUrl,
  other,
  chatModel,
});

export const VERTEX_CHANNELS: EmulatedChannel[] = [
  { ...vertexChannel('us-central1', 'gemini-2.0-flash'), embeddingModel: 'text-embedding-005' },
  vertexChannel('us-east5', 'claude-3-5-haiku-20241022'),
];

export interface VertexEmulator extends ProtocolEmulator {
  /** Access tokens minted (a good assertion each). */
  tokenRequests: number;
  /** Assertions refused. */
  refusedAssertions: number;
  /** Revokes every access token minted so far (as an admin revoking them, or a rotated key): the model endpoints answer them 401 from now on. Returns how many. */
  revokeMinted(): number;
  /** While set, the model endpoints answer every token 401, even one minted just now. */
  refuseAllTokens: boolean;
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const MODEL_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(generateContent|streamGenerateContent|rawPredict|streamRawPredict|predict)$/;
/** Google's text embedding models, and the length of their vectors. */
const EMBEDDING_MODELS: Record<string, number> = {
  'text-embedding-005': 768,
  'text-multilingual-embedding-002': 768,
  'gemini-embedding-001': 3072,
};

export class GoogleError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
  ) {
    super(message);
  }
}

export const sendJson = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  response.end(JSON.stringify(body));
};

export async function startVertexEmulator(): Promise<VertexEmulator> {
  const gemini = await startGeminiEmulator();
  const anthropic = await startAnthropicEmulator();
  const publicKey = await importSPKI(ACCOUNT.publicKey, 'RS256');
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  const minted = new Set<string>();
  let baseUrl = '';
  const state = { tokenRequests: 0, refusedAssertions: 0, refuseAllTokens: false };

  const mint = async (raw: string, response: ServerResponse) => {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== JWT_BEARER)
      return sendJson(response, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Invalid grant_type: ' + (form.get('grant_type') ?? ''),
      });
    const assertion = form.get('assertion') ?? '';
    try {
      const { payload, protectedHeader } = await jwtVerify(assertion, publicKey, {
        algorithms: ['RS256'],
        issuer: ACCOUNT.email,
        audience: `${baseUrl}/token`,
        maxTokenAge: '1h',
      });
      if (payload.scope !== CLOUD_PLATFORM)
        return sendJson(response, 400, { error: 'invalid_scope', error_description: 'Invalid OAuth scope or ID token audience provided.' });
      if (protectedHeader.kid !== undefined && protectedHeader.kid !== ACCOUNT.keyId) throw new Error('unknown key id');
    } catch {
      state.refusedAssertions += 1;
      return sendJson(response, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    }
    state.tokenRequests += 1;
    const token = `ya29.emulator-${state.tokenRequests}-${Math.random().toString(36).slice(2)}`;
    minted.add(token);
    sendJson(response, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
  };

  /**
   * A text embedding model's `:predict`: `{instances: [{content}], parameters?: {outputDimensionality}}` answered
   * `{predictions: [{embeddings: {values, statistics: {token_count, truncated}}}]}`, a token per word of each content.
   */
  const embed = (model: string, body: unknown, response: ServerResponse) => {
    const length = EMBEDDING_MODELS[model];
    if (!length)
      throw new GoogleError(
        404,
        'NOT_FOUND',
        `Publisher Model \`publishers/google/models/${model}\` was not found or your project does not have access to it.`,
      );
    const { instances, parameters } = body as { instances?: unknown; parameters?: { outputDimensionality?: unknown } };
    if (
      !Array.isArray(instances) ||
      instances.length === 0 ||
      !instances.every((instance) => typeof (instance as { content?: unknown })?.content === 'string')
    ) {
      throw new GoogleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Each instance needs a "content" string.');
    }
    const dimensions = parameters?.outputDimensionality === undefined ? length : Number(parameters.outputDimensionality);
    let tokens = 0;
    const predictions = (instances as Array<{ content: string }>).map(({ content }) => {
      const tokenCount = content.split(/\s+/).filter(Boolean).length;
      tokens += tokenCount;
      const values = Array.from({ length: dimensions }, (_, position) => Number(Math.sin(content.length + position).toFixed(6)));
      return { embeddings: { values, statistics: { token_count: tokenCount, truncated: false } } };
    });
    reported.push({ promptTokens: tokens, completionTokens: 0, cachedPromptTokens: 0 });
    sendJson(response, 200, {
      predictions,
      metadata: {
        billableCharacterCount: (instances as Array<{ content: string }>).reduce(
          (sum, { content }) => sum + content.replace(/\s/g, '').length,
          0,
        ),
      },
    });
  };

  /** Hands a checked call to the vendor emulator behind, streaming its answer back as it comes. */
  const handOn = async (response: ServerResponse, url: string, headers: Record<string, string>, body: string, vendor: ProtocolEmulator) => {
    const answered = vendor.reported.length;
    const answer = await fetch(url, { method: 'POST', headers, body });
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    for await (const piece of answer.body as unknown as AsyncIterable<Uint8Array>) {
      if (response.destroyed) return;
      response.write(piece);
    }
    if (vendor.reported.length > answered) reported.push(vendor.reported.at(-1)!);
    response.end();
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const { text: raw, body } = await readRequestBody(incoming);
    const url = new URL(incoming.url ?? '/', 'http://emulator');
    requests.push({ method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body, raw });
    if (incoming.method === 'POST' && url.pathname === '/token') return mint(raw, response);

    const match = MODEL_PATH.exec(url.pathname);
    if (!match || incoming.method !== 'POST')
      throw new GoogleError(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`);
    const authorization = incoming.headers.authorization ?? '';
    if (state.refuseAllTokens || !authorization.startsWith('Bearer ') || !minted.has(authorization.slice('Bearer '.length))) {
      throw new GoogleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
    const [, project, , publisher, modelText, method] = match;
    const model = decodeURIComponent(modelText);
    if (decodeURIComponent(project) !== ACCOUNT.project) {
      throw new GoogleError(
        403,
        'PERMISSION_DENIED',
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/.../publishers/${publisher}/models/${model}' (or it may not exist).`,
      );
    }
    if (body === undefined) throw new GoogleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');

    if (publisher === 'google' && method === 'predict') return embed(model, body, response);
    if (publisher === 'google') {
      if (method !== 'generateContent' && method !== 'streamGenerateContent')
        throw new GoogleError(400, 'INVALID_ARGUMENT', `${method} is not served for Google's models.`);
      const key = GEMINI_CHANNELS[0].key;
      return handOn(
        response,
        `${gemini.baseUrl}/v1beta/models/${modelText}:${method}${url.search}`,
        { 'content-type': 'application/json', 'x-goog-api-key': key },
        raw,
        gemini,
      );
    }
    if (method !== 'rawPredict' && method !== 'streamRawPredict')
      throw new GoogleError(400, 'INVALID_ARGUMENT', `${method} is not served for Anthropic's models.`);
    if (!/^claude-[a-z0-9-]+@\d{8}$/.test(model))
      throw new GoogleError(
        404,
        'NOT_FOUND',
        `Publisher Model \`projects/${project}/locations/.../publishers/anthropic/models/${model}\` was not found.`,
      );
    const { anthropic_version: version, ...messages } = body as Record<string, unknown>;
    if (version !== VERTEX_ANTHROPIC_VERSION)
      throw new GoogleError(400, 'INVALID_ARGUMENT', 'anthropic_version: vertex-2023-10-16 is required in the body');
    if ('model' in messages)
      throw new GoogleError(400, 'INVALID_ARGUMENT', 'model: Extra inputs are not permitted (the model is named in the URL)');
    if ((messages.stream === true) !== (method === 'streamRawPredict'))
      throw new GoogleError(400, 'INVALID_ARGUMENT', `stream must be ${method === 'streamRawPredict'} for ${method}`);
    return handOn(
      response,
      `${anthropic.baseUrl}/v1/messages`,
      { 'content-type': 'application/json', 'x-api-key': ANTHROPIC_GOOD_KEY, 'anthropic-version': '2023-06-01' },
      JSON.stringify({ model: model.replace('@', '-'), ...messages }),
      anthropic,
    );
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (error instanceof GoogleError)
        sendJson(response, error.code, { error: { code: error.code, message: error.message, status: error.status } });
      else sendJson(response, 500, { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } });
    });
  });
  const listening = await listenOnLoopback(server);
  baseUrl = listening.baseUrl;
  return {
    baseUrl,
    requests,
    reported,
    get tokenRequests() {
      return state.tokenRequests;
    },
    get refusedAssertions() {
      return state.refusedAssertions;
    },
    get refuseAllTokens() {
      return state.refuseAllTokens;
    },
    set refuseAllTokens(refuse: boolean) {
      state.refuseAllTokens = refuse;
    },
    revokeMinted() {
      const revoked = minted.size;
      minted.clear();
      return revoked;
    },
    close: async () => {
      await listening.close();
      await Promise.all([gemini.close(), anthropic.close()]);
    },
  };
}
