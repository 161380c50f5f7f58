// The signing row: CPU per SigV4 signature of a Bedrock Converse call, as the
// gateway signs it (the adaptor's sign(): server/protocols/upstream/bedrock/sigv4.ts,
// synchronous on Node's crypto) beside the signers it used before,
// @smithy/signature-v4 hashing with Node's crypto (nativeSha256.ts) and the
// same hashing in JavaScript (@aws-crypto/sha256-js), in alternating rounds in
// this process. The whole call's cost, signed against not, is the Bedrock
// protocol rows' CPU per request.
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { BEDROCK_CHANNELS } from '../tests/support/emulators/bedrock';
import { bedrockAdaptor } from '../server/protocols/upstream/bedrock';
import { isUpstreamFailure } from '../server/protocols/types';
import { NativeSha256 } from './nativeSha256';
import { median } from './wrk';

const MODEL = 'claude-3-haiku-20240307';
const ROUNDS = 5;
const CALLS = 2000;

/** µs of this process's CPU per call of `work`, after a warm-up. */
async function cpuMicrosPerCall(work: () => Promise<unknown>): Promise<number> {
  for (let index = 0; index < 200; index += 1) await work();
  const before = process.cpuUsage();
  for (let index = 0; index < CALLS; index += 1) await work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / CALLS;
}

export async function signingCostRows(): Promise<string[]> {
  const channel = { type: 33, key: BEDROCK_CHANNELS[0].key, baseUrl: 'http://127.0.0.1:9', other: '' };
  const body = { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
  const call = { operation: 'chat' as const, model: MODEL, stream: false, responseId: 'bench', now: Math.floor(Date.now() / 1000) };
  const encoded = bedrockAdaptor.encodeChat(body, call);
  const target = bedrockAdaptor.target(channel, call);
  if (isUpstreamFailure(target)) throw new Error(target.message);
  const [accessKeyId, secretAccessKey, region] = channel.key.split('|');
  const jsSigner = new SignatureV4({ service: 'bedrock', region, credentials: { accessKeyId, secretAccessKey }, sha256: Sha256 });
  const librarySigner = new SignatureV4({
    service: 'bedrock',
    region,
    credentials: { accessKeyId, secretAccessKey },
    sha256: NativeSha256,
  });
  const url = new URL(target.url);
  const request = () => ({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { ...target.headers, host: url.host },
    body: encoded,
  });
  const own: number[] = [];
  const library: number[] = [];
  const javascript: number[] = [];
  const signingDate = new Date(call.now * 1000);
  for (let round = 0; round < ROUNDS; round += 1) {
    own.push(await cpuMicrosPerCall(async () => bedrockAdaptor.sign!(target, encoded, channel, call)));
    library.push(await cpuMicrosPerCall(() => librarySigner.sign(request(), { signingDate })));
    javascript.push(await cpuMicrosPerCall(() => jsSigner.sign(request(), { signingDate })));
  }
  const spread = (values: number[]) => `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}`;
  return [
    '',
    `SigV4 signing of a Bedrock Converse call, CPU µs per signature in this process, ${ROUNDS} alternating rounds of ${CALLS}:`,
    '',
    '| signer | CPU µs/signature (median) | spread |',
    '|---|---:|---|',
    `| the gateway's (sigv4.ts: synchronous, Node's crypto, the signing key kept per day) | ${median(own).toFixed(1)} | ${spread(own)} |`,
    `| @smithy/signature-v4 hashing with Node's crypto (the signer before) | ${median(library).toFixed(1)} | ${spread(library)} |`,
    `| @smithy/signature-v4 hashing in JavaScript (the one before that) | ${median(javascript).toFixed(1)} | ${spread(javascript)} |`,
  ];
}
