// GET /v1/realtime through the real gateway on loopback, with a WebSocket
// client and the realtime emulator as the upstream: frames pass both ways as
// they are, each response is billed from the usage its response.done reports
// (text and audio priced apart), a balance that runs out closes the session
// after the response in flight, the limits close both sides, refusals come
// before the upgrade, and whatever way a session ends nothing stays held.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTextTokens } from '../../../server/protocols/inbound/tokenCount';
import { buildTestApp } from '../../support/app';
import { relayContextOf } from '../../../server/plugins/relayContext';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { ledgerState } from '../../support/ledgerState';
import {
  AZURE_REALTIME_GOOD_KEY,
  REALTIME_GOOD_KEY,
  startRealtimeEmulator,
  type RealtimeEmulator,
  type RealtimeUsageReport,
} from '../../support/emulators/realtime';
import { consumeLogCount, resetRelay, startRelayHarness, type RelayHarness } from './harness';

const MODEL = 'gpt-4o-realtime-preview';

// the suite's harness and emulator (one per database, as the describes run in turn)
let harness: RelayHarness;
let upstream: RealtimeEmulator;
// SQLite, then PostgreSQL and MySQL/MariaDB both ways each: quota leases (their default) and a reservation row
// per hold; a server that is down is a visible skip, or a failure under SWITCHBOARD_REQUIRE_SERVICES=1
const targets = (await databaseTargets('realtime')).flatMap((target) =>
  target.name === 'sqlite' ? [{ target, quotaLeases: false }] : [true, false].map((quotaLeases) => ({ target, quotaLeases })),
);

/**
 * The bill of one response, written out from OpenAI's prices for gpt-4o-realtime-preview
 * (per million: text $5 in, $2.50 cached, $20 out; audio $40 in, $2.50 cached, $80 out): model ratio 2.5
 * (US$2 per million = 1), so shares of the text input price: completion 4, cached 0.5, audio in 8, audio out 16.
 */
function expectedCharge(usage: RealtimeUsageReport): number {
  const input = usage.input_token_details;
  const cached = input.cached_tokens_details;
  const weighted =
    input.text_tokens -
    cached.text_tokens +
    cached.text_tokens * 0.5 +
    (input.audio_tokens - cached.audio_tokens) * 8 +
    cached.audio_tokens * 0.5 +
    Math.floor(usage.output_token_details.text_tokens * 4) +
    Math.floor(usage.output_token_details.audio_tokens * 16);
  return Math.floor(weighted * 2.5);
}

async function realtimeChannel(fields: Record<string, unknown> = {}) {
  return harness.addChannel({ name: 'realtime', type: 1, key: REALTIME_GOOD_KEY, base_url: upstream.baseUrl, models: MODEL, ...fields });
}

interface Client {
  socket: WebSocket;
  events: Array<Record<string, any>>;
  texts: string[];
  binaries: Buffer[];
  closed: Promise<{ code: number; reason: string }>;
  send(event: Record<string, unknown>): void;
  next(type: string, after?: number): Promise<Record<string, any>>;
}

/** Opens a session; rejects with the HTTP status and body when the gateway refuses the upgrade. */
function connect(options: { key?: string; model?: string; protocols?: string[]; path?: string; ga?: boolean } = {}): Promise<Client> {
  const path = options.path ?? `/v1/realtime?model=${encodeURIComponent(options.model ?? MODEL)}`;
  const url = `${harness.baseUrl.replace('http:', 'ws:')}${path}`;
  const socket = options.protocols
    ? new WebSocket(url, options.protocols)
    : new WebSocket(url, {
        headers: { authorization: `Bearer ${options.key ?? harness.apiKey}`, ...(options.ga ? {} : { 'openai-beta': 'realtime=v1' }) },
      });
  const client: Client = {
    socket,
    events: [],
    texts: [],
    binaries: [],
    closed: new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
    send: (event) => socket.send(JSON.stringify(event)),
    async next(type, after = 0) {
      for (let waited = 0; waited < 5000; waited += 10) {
        const found = client.events.slice(after).find((event) => event.type === type);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no ${type} event; got ${client.events.map((event) => event.type).join(', ')}`);
    },
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) client.binaries.push(data as Buffer);
    else {
      client.texts.push((data as Buffer).toString());
      client.events.push(JSON.parse((data as Buffer).toString()));
    }
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(client));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () =>
        reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode, body: JSON.parse(body || '{}') })),
      );
    });
    socket.once('error', reject);
  });
}

/** A realtime channel, the ledger before, and a session past its session.created. */
async function startSession() {
  const channelId = await realtimeChannel();
  const before = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
  const logsBefore = await consumeLogCount(harness);
  const reportedBefore = upstream.reported.length;
  const client = await connect();
  await client.next('session.created');
  return { channelId, before, logsBefore, reportedBefore, client };
}

const say = (text: string) => ({
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
});

/** The gateway has settled and logged everything; the ledger invariant holds and nothing is held. */
/**
 * After the client's close: its session's settlements are written by the gateway once it has seen the close too,
 * which on a busy machine may be after the client's socket has closed; waits (up to 10 s) for `logs` consume logs
 * past `logsBefore`, then checks that nothing is held.
 */
async function settledAfterClose(logsBefore: number, logs: number) {
  for (let waited = 0; waited < 10_000 && (await consumeLogCount(harness)) < logsBefore + logs; waited += 20) {
    await harness.settled();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return expectNothingHeld();
}

async function expectNothingHeld() {
  await harness.settled();
  const state = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
  expect(state.tokenHeld).toBe(0);
  expect(state.userHeld).toBe(0);
  expect(state.reservationsHeld).toBe(0);
  return state;
}

/** Waits (up to 5 s) until `done` says so. */
async function waitFor(done: () => boolean) {
  for (let waited = 0; waited < 5000 && !done(); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

/** Waits until the session's socket to the upstream is closed. */
async function upstreamClosed(index: number) {
  for (let waited = 0; waited < 5000 && upstream.sessions[index]?.closedWith === undefined; waited += 10)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return upstream.sessions[index]?.closedWith;
}

for (const { target, quotaLeases } of targets) {
  describe.runIf(target.available)(
    `realtime on ${target.name}${target.name === 'sqlite' ? '' : quotaLeases ? ' with quota leases' : ' with reservation rows'}`,
    () => {
      let database: TestDatabase;
      beforeAll(async () => {
        database = await target.create();
        harness = await startRelayHarness(database.config, { quotaLeases });
        upstream = await startRealtimeEmulator();
      });
      afterAll(async () => {
        await harness?.close();
        await upstream?.close();
        await database?.drop();
      });
      beforeEach(async () => {
        await resetRelay(harness);
        await harness.app.ctx.options.set('RealtimeIdleSeconds', '300');
        await harness.app.ctx.options.set('RealtimeMaxSeconds', '1800');
        upstream.deltaMs = 5;
      });

      describe('frames', () => {
        it('pass both ways unchanged, text and binary, to the channel with its key and the beta header', async () => {
          await realtimeChannel();
          const sessionsBefore = upstream.sessions.length;
          const client = await connect();
          const created = await client.next('session.created');
          const upstreamSession = upstream.sessions[sessionsBefore];
          expect(created.session.model).toBe(MODEL);
          expect(client.texts[0]).toBe(upstreamSession.sent[0]);
          expect(upstreamSession.url).toBe(`/v1/realtime?model=${MODEL}`);
          expect(upstreamSession.headers.authorization).toBe(`Bearer ${REALTIME_GOOD_KEY}`);
          expect(upstreamSession.headers['openai-beta']).toBe('realtime=v1');

          // an odd spacing and key order: the upstream gets these very bytes
          const frame =
            '{ "type":"conversation.item.create",  "item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi there"}]}}';
          client.socket.send(frame);
          const binary = Buffer.from([0, 1, 2, 250, 251, 252]);
          client.socket.send(binary);
          await client.next('conversation.item.created');
          for (let waited = 0; waited < 2000 && client.binaries.length === 0; waited += 10)
            await new Promise((resolve) => setTimeout(resolve, 10));
          expect(upstreamSession.received[0]).toBe(frame);
          expect(upstreamSession.received[1]).toEqual(binary);
          expect(client.binaries[0]).toEqual(binary);
          // every text frame the upstream sent reached the client as it was sent
          expect(client.texts).toEqual(upstreamSession.sent.slice(0, client.texts.length));
          client.socket.close(1000, 'bye');
          expect(await upstreamClosed(sessionsBefore)).toBe(1000);
        });

        it('marks the node busy while frames pass either way, so a batch the gateway runs keeps to its busy pace', async () => {
          await realtimeChannel();
          const relay = relayContextOf(harness.app, bookkeepingFor(harness.app.ctx, harness.app.log));
          const client = await connect();
          await client.next('session.created');
          relay.lastInteractiveAt = 0;
          // the mark moves past the moment the frame was sent (an order, not a measured time)
          const sentAt = Date.now();
          client.send({
            type: 'conversation.item.create',
            item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          });
          await client.next('conversation.item.created');
          expect(relay.lastInteractiveAt).toBeGreaterThanOrEqual(sentAt);
          client.socket.close(1000, 'bye');
          await client.closed;
        });

        it('opens a GA session upstream for a GA client (no beta header forced), and a beta one for a beta client; events pass as sent', async () => {
          await realtimeChannel();
          const ga = await connect({ ga: true });
          await ga.next('session.created');
          expect(upstream.sessions.at(-1)!.headers['openai-beta']).toBeUndefined();
          const update = { type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], instructions: 'be brief' } };
          ga.send(update);
          await waitFor(() =>
            upstream.sessions.at(-1)!.received.some((frame) => typeof frame === 'string' && frame.includes('output_modalities')),
          );
          expect(upstream.sessions.at(-1)!.received.find((frame) => typeof frame === 'string' && frame.includes('output_modalities'))).toBe(
            JSON.stringify(update),
          );
          ga.socket.close();
          await ga.closed;
          const beta = await connect();
          await beta.next('session.created');
          expect(upstream.sessions.at(-1)!.headers['openai-beta']).toBe('realtime=v1');
          beta.socket.close();
          await beta.closed;
          await expectNothingHeld();
        });

        it("takes the browser's subprotocol key and answers with the realtime subprotocol", async () => {
          await realtimeChannel();
          const client = await connect({ protocols: ['realtime', `openai-insecure-api-key.${harness.apiKey}`, 'openai-beta.realtime-v1'] });
          expect(client.socket.protocol).toBe('realtime');
          await client.next('session.created');
          client.socket.close();
          await client.closed;
        });

        it('goes to an Azure channel at its deployment with the api-key header', async () => {
          await harness.addChannel({
            name: 'azure-realtime',
            type: 3,
            key: AZURE_REALTIME_GOOD_KEY,
            base_url: upstream.baseUrl,
            models: MODEL,
            other: '2024-06-01',
          });
          const sessionsBefore = upstream.sessions.length;
          const client = await connect();
          await client.next('session.created');
          const upstreamSession = upstream.sessions[sessionsBefore];
          expect(upstreamSession.url).toBe(`/openai/realtime?api-version=2024-10-01-preview&deployment=${MODEL}`);
          expect(upstreamSession.headers['api-key']).toBe(AZURE_REALTIME_GOOD_KEY);
          expect(upstreamSession.headers.authorization).toBeUndefined();
          client.socket.close();
          await client.closed;
        });
      });

      describe('billing', () => {
        it('bills two responses exactly, text and audio priced apart, one log row each', async () => {
          const { channelId, before, logsBefore, reportedBefore, client } = await startSession();

          client.send(say('what is the weather like today'));
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          const firstDone = await client.next('response.done');
          expect(firstDone.response.status).toBe('completed');
          const deltas = client.events.filter((event) => event.type === 'response.text.delta').map((event) => event.delta as string);
          expect(deltas.join('')).toBe('Hello from realtime, you said: what is the weather like today');

          const mark = client.events.length;
          client.send(say('and tomorrow'));
          client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(24_000).toString('base64') });
          client.send({ type: 'input_audio_buffer.commit' });
          client.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } });
          const secondDone = await client.next('response.done', mark);
          expect(client.events.slice(mark).some((event) => event.type === 'response.audio.delta')).toBe(true);

          const [first, second] = upstream.reported.slice(reportedBefore);
          const { status: firstStatus, ...firstUsage } = first;
          expect(firstStatus).toBe('completed');
          expect(firstDone.response.usage).toEqual(firstUsage);
          expect(secondDone.response.usage.output_token_details.audio_tokens).toBeGreaterThan(0);
          expect(second.input_token_details.audio_tokens).toBe(5);
          expect(second.input_token_details.cached_tokens).toBe(first.input_tokens);
          const charges = [expectedCharge(first), expectedCharge(second)];
          client.socket.close();
          await client.closed;

          const state = await settledAfterClose(logsBefore, 2);
          const logs = await harness.app.ctx.db
            .selectFrom('logs')
            .selectAll()
            .where('type', '=', 2)
            .orderBy('id', 'asc')
            .offset(logsBefore)
            .limit(10)
            .execute();
          expect(logs).toHaveLength(2);
          expect(
            logs.map((log) => ({
              quota: log.quota,
              prompt: log.prompt_tokens,
              completion: log.completion_tokens,
              model: log.model_name,
              channel: log.channel_id,
            })),
          ).toEqual([
            { quota: charges[0], prompt: first.input_tokens, completion: first.output_tokens, model: MODEL, channel: channelId },
            { quota: charges[1], prompt: second.input_tokens, completion: second.output_tokens, model: MODEL, channel: channelId },
          ]);
          expect(before.remain - state.remain).toBe(charges[0] + charges[1]);
          expect(state.logged - before.logged).toBe(charges[0] + charges[1]);
          expect(before.quota - state.quota).toBe(charges[0] + charges[1]);
          const channel = await harness.app.ctx.db
            .selectFrom('channels')
            .select('used_quota')
            .where('id', '=', channelId)
            .executeTakeFirstOrThrow();
          expect(Number(channel.used_quota)).toBe(charges[0] + charges[1]);
        });

        it('refuses a response the balance cannot cover, and closes the session after the one in flight is billed', async () => {
          const channelId = await realtimeChannel();
          // enough for the first response's hold ((the bytes of its two frames, about 200, x 8 + 40 x 16) x 2.5, some
          // 5,600) but not for a second beside it (its own frame's 95 bytes: (95 x 8 + 640) x 2.5, some 3,500)
          const token = await harness.admin('POST', '/api/token/', { name: 'small', remain_quota: 7_000 });
          const key = `sk-${token.data.key}`;
          const tokenId = token.data.id as number;
          const before = await ledgerState(harness.app.ctx.db, 1, tokenId);
          const sessionsBefore = upstream.sessions.length;
          upstream.deltaMs = 20;
          const client = await connect({ key });
          await client.next('session.created');
          client.send(say('hello'));
          client.send({ type: 'response.create', event_id: 'first', response: { modalities: ['text'], max_output_tokens: 40 } });
          await client.next('response.created');
          client.send({ type: 'response.create', event_id: 'second', response: { modalities: ['text'], max_output_tokens: 40 } });

          const refused = await client.next('error');
          expect(refused.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', event_id: 'second' });
          // the first response runs to its end and reaches the client, then the session closes
          const done = await client.next('response.done');
          expect(done.response.status).toBe('completed');
          expect(client.events.indexOf(refused)).toBeLessThan(client.events.indexOf(done));
          expect(await client.closed).toEqual({ code: 1008, reason: 'insufficient quota' });
          expect(await upstreamClosed(sessionsBefore)).toBe(1000);
          // the refused response.create never reached the upstream
          const asked = upstream.sessions[sessionsBefore].received.filter(
            (frame) => typeof frame === 'string' && frame.includes('"response.create"'),
          );
          expect(asked).toHaveLength(1);

          await harness.settled();
          const state = await ledgerState(harness.app.ctx.db, 1, tokenId);
          const charge = expectedCharge(upstream.reported.at(-1)!);
          expect(state).toMatchObject({ tokenHeld: 0, userHeld: 0, reservationsHeld: 0 });
          expect(state.logged - before.logged).toBe(charge);
          expect(before.remain - state.remain).toBe(charge);
          const log = await harness.app.ctx.db
            .selectFrom('logs')
            .selectAll()
            .where('token_id', '=', tokenId)
            .where('type', '=', 2)
            .execute();
          expect(log).toHaveLength(1);
          expect(log[0]).toMatchObject({ quota: charge, channel_id: channelId });
        });

        for (const shape of ['response.create', 'session.update'] as const) {
          it(`holds the instructions, input items and tools a ${shape} carries: 200 kB of them on 50,000 quota is refused before the response.create is sent`, async () => {
            await realtimeChannel();
            const token = await harness.admin('POST', '/api/token/', { name: `inline ${shape}`, remain_quota: 50_000 });
            const tokenId = token.data.id as number;
            const before = await ledgerState(harness.app.ctx.db, 1, tokenId);
            const sessionsBefore = upstream.sessions.length;
            const client = await connect({ key: `sk-${token.data.key}` });
            await client.next('session.created');
            const carried = {
              instructions: 'x'.repeat(100_000),
              tools: [
                { type: 'function', name: 'lookup', description: 'y'.repeat(50_000), parameters: { type: 'object', properties: {} } },
              ],
            };
            const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'z'.repeat(50_000) }] }];
            if (shape === 'session.update') client.send({ type: 'session.update', session: carried });
            const response =
              shape === 'response.create'
                ? { modalities: ['text'], max_output_tokens: 16, ...carried, input }
                : { modalities: ['text'], max_output_tokens: 16 };
            client.send({ type: 'response.create', event_id: 'inline', response });
            const refused = await client.next('error');
            expect(refused.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', event_id: 'inline' });
            expect(await client.closed).toEqual({ code: 1008, reason: 'insufficient quota' });
            const asked = upstream.sessions[sessionsBefore].received.filter(
              (frame) => typeof frame === 'string' && frame.includes('"response.create"'),
            );
            expect(asked).toHaveLength(0);
            await harness.settled();
            const state = await ledgerState(harness.app.ctx.db, 1, tokenId);
            expect(state).toMatchObject({ tokenHeld: 0, userHeld: 0, reservationsHeld: 0 });
            expect(state.remain).toBe(before.remain);
            expect(state.logged).toBe(before.logged);
          });
        }

        it('a client that leaves mid-response: the response is cancelled upstream, its usage so far billed, nothing held', async () => {
          const { before, reportedBefore, logsBefore, client } = await startSession();
          upstream.deltaMs = 10;
          client.send(say('tell me slowly'));
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          await client.next('response.text.delta');
          await new Promise((resolve) => setTimeout(resolve, 50));
          client.socket.terminate();

          for (let waited = 0; waited < 3000 && (await consumeLogCount(harness)) === logsBefore; waited += 20) {
            await harness.settled();
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          const cancelled = upstream.reported[reportedBefore];
          expect(cancelled.status).toBe('cancelled');
          expect(cancelled.output_tokens).toBeGreaterThan(0);
          expect(cancelled.output_tokens).toBeLessThan(200);
          const state = await expectNothingHeld();
          expect(state.logged - before.logged).toBe(expectedCharge(cancelled));
          expect(before.remain - state.remain).toBe(state.logged - before.logged);
        });

        it("an upstream that drops mid-response: the client gets its close code, and what passed is billed at the gateway's count, logged as cut off", async () => {
          const { channelId, before, logsBefore, reportedBefore, client } = await startSession();
          client.send(say('what is the weather like today'));
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          await client.next('response.done');
          const first = upstream.reported[reportedBefore];

          // the second response (audio and its transcript) is cut after its third delta; no usage ever comes
          const mark = client.events.length;
          client.send(say('please drop now'));
          client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(24_000).toString('base64') });
          client.send({ type: 'input_audio_buffer.commit' });
          client.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } });
          expect(await client.closed).toEqual({ code: 1011, reason: 'upstream fell over' });
          expect(upstream.reported).toHaveLength(reportedBefore + 1);

          // what passed, as the client got it: three transcript deltas and three 100 ms audio deltas
          const passed = client.events.slice(mark);
          const transcript = passed
            .filter((event) => event.type === 'response.audio_transcript.delta')
            .map((event) => event.delta as string);
          const audioBytes = passed
            .filter((event) => event.type === 'response.audio.delta')
            .reduce((sum, event) => sum + Buffer.from(event.delta as string, 'base64').length, 0);
          expect(transcript.join('')).toBe('Hello from realtime,');
          expect(audioBytes).toBe(3 * 4_800);
          // input: the conversation as the first response reported it, the new text by the tokenizer, 0.5 s of audio at 10 a second
          const textIn =
            first.input_token_details.text_tokens + first.output_token_details.text_tokens + countTextTokens('please drop now', MODEL);
          const audioIn = 5;
          // output: the transcript by the tokenizer, 0.3 s of assistant audio at 20 a second
          const textOut = countTextTokens(transcript.join(''), MODEL);
          const audioOut = 6;
          // priced as the test's expectedCharge does, nothing cached (an estimate, as for a chat stream the upstream cut)
          const cutCharge = Math.floor((textIn + audioIn * 8 + Math.floor(textOut * 4) + Math.floor(audioOut * 16)) * 2.5);

          const state = await expectNothingHeld();
          const logs = await harness.app.ctx.db
            .selectFrom('logs')
            .selectAll()
            .where('type', '=', 2)
            .orderBy('id', 'asc')
            .offset(logsBefore)
            .limit(10)
            .execute();
          expect(logs).toHaveLength(2);
          expect(logs[0]).toMatchObject({ quota: expectedCharge(first), estimated: 0 });
          expect(logs[1]).toMatchObject({
            quota: cutCharge,
            prompt_tokens: textIn + audioIn,
            completion_tokens: textOut + audioOut,
            channel_id: channelId,
            model_name: MODEL,
          });
          expect(Boolean(logs[1].estimated)).toBe(true);
          expect(logs[1].content).toContain(
            'realtime cut off (the upstream ended the session before its usage came: 1011 upstream fell over)',
          );
          // the ledger: what the token had, less what its logs say it was charged, is what it has
          expect(before.remain - state.remain).toBe(expectedCharge(first) + cutCharge);
          expect(state.logged - before.logged).toBe(expectedCharge(first) + cutCharge);
          expect(before.quota - state.quota).toBe(expectedCharge(first) + cutCharge);
        });
      });

      // two seconds of grace per run: once is enough for the path (the money path is the drop test's, on every database)
      if (target.name === 'sqlite')
        it("a response whose usage never comes after the client left is billed at the gateway's count once the grace is over", async () => {
          const { before, logsBefore, client } = await startSession();
          client.send({ type: 'session.update', session: { instructions: 'Answer in one short line.' } });
          await client.next('session.updated');
          client.send(say('tell me and then stall'));
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          for (
            let waited = 0;
            waited < 3000 && client.events.filter((event) => event.type === 'response.text.delta').length < 3;
            waited += 10
          )
            await new Promise((resolve) => setTimeout(resolve, 10));
          const deltas = client.events.filter((event) => event.type === 'response.text.delta').map((event) => event.delta as string);
          expect(deltas).toEqual(['Hello', ' from', ' realtime,']);
          const leftAt = Date.now();
          client.socket.close(1000, 'bye');
          for (let waited = 0; waited < 5000 && (await consumeLogCount(harness)) === logsBefore; waited += 20) {
            await harness.settled();
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          expect(Date.now() - leftAt).toBeGreaterThanOrEqual(1900);
          // the instructions and the user's text, nothing reported before: all counted; the three deltas that passed
          const textIn = countTextTokens('Answer in one short line.', MODEL) + countTextTokens('tell me and then stall', MODEL);
          const textOut = countTextTokens(deltas.join(''), MODEL);
          const charge = Math.floor((textIn + Math.floor(textOut * 4)) * 2.5);
          const state = await expectNothingHeld();
          const log = await harness.app.ctx.db
            .selectFrom('logs')
            .selectAll()
            .where('type', '=', 2)
            .orderBy('id', 'desc')
            .executeTakeFirstOrThrow();
          expect(log).toMatchObject({ quota: charge, prompt_tokens: textIn, completion_tokens: textOut });
          expect(Boolean(log.estimated)).toBe(true);
          expect(log.content).toContain("realtime cut off (no usage came within 2 s of the session's end: 1000 bye)");
          expect(before.remain - state.remain).toBe(charge);
          expect(state.logged - before.logged).toBe(charge);
        });

      describe('responses the server starts, and refusals from upstream', () => {
        it('holds for a response server VAD starts at response.created and bills it', async () => {
          const { channelId, before, logsBefore, reportedBefore, client } = await startSession();
          client.send({ type: 'session.update', session: { turn_detection: { type: 'server_vad' } } });
          await client.next('session.updated');
          client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') });
          const done = await client.next('response.done');
          expect(done.response.status).toBe('completed');
          const reported = upstream.reported[reportedBefore];
          expect(reported.input_token_details.audio_tokens).toBe(10);
          client.socket.close();
          await client.closed;
          const state = await settledAfterClose(logsBefore, 1);
          expect(await consumeLogCount(harness)).toBe(logsBefore + 1);
          expect(state.logged - before.logged).toBe(expectedCharge(reported));
          expect(before.remain - state.remain).toBe(expectedCharge(reported));
          const log = await harness.app.ctx.db
            .selectFrom('logs')
            .selectAll()
            .where('type', '=', 2)
            .orderBy('id', 'desc')
            .executeTakeFirstOrThrow();
          expect(log).toMatchObject({
            channel_id: channelId,
            prompt_tokens: reported.input_tokens,
            completion_tokens: reported.output_tokens,
          });
        });

        it('cancels a response server VAD starts that the balance cannot cover, and closes with 1008', async () => {
          await realtimeChannel();
          const token = await harness.admin('POST', '/api/token/', { name: 'vad-small', remain_quota: 1_500 });
          const tokenId = token.data.id as number;
          const sessionsBefore = upstream.sessions.length;
          const client = await connect({ key: `sk-${token.data.key}` });
          await client.next('session.created');
          client.send({ type: 'session.update', session: { turn_detection: { type: 'server_vad' } } });
          await client.next('session.updated');
          client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') });
          const refused = await client.next('error');
          expect(refused.error).toMatchObject({ code: 'insufficient_quota' });
          expect(await client.closed).toEqual({ code: 1008, reason: 'insufficient quota' });
          const cancels = upstream.sessions[sessionsBefore].received.filter(
            (frame) => typeof frame === 'string' && frame.includes('"response.cancel"'),
          );
          expect(cancels.length).toBeGreaterThanOrEqual(1);
          await harness.settled();
          expect(await ledgerState(harness.app.ctx.db, 1, tokenId)).toMatchObject({
            tokenHeld: 0,
            userHeld: 0,
            reservationsHeld: 0,
            remain: 1_500,
            logged: 0,
          });
        });

        it('gives back the hold of a response.create the upstream refuses, and the session goes on', async () => {
          const { before, logsBefore, reportedBefore, client } = await startSession();
          upstream.deltaMs = 10;
          client.send(say('hello twice'));
          client.send({ type: 'response.create', event_id: 'one', response: { modalities: ['text'] } });
          client.send({ type: 'response.create', event_id: 'two', response: { modalities: ['text'] } });
          const refused = await client.next('error');
          expect(refused.error).toMatchObject({ code: 'conversation_already_has_active_response', event_id: 'two' });
          await client.next('response.done');
          // still open: another response runs and is billed
          const mark = client.events.length;
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          await client.next('response.done', mark);
          client.socket.close();
          await client.closed;
          const state = await settledAfterClose(logsBefore, 2);
          const charges = upstream.reported.slice(reportedBefore).map(expectedCharge);
          expect(charges).toHaveLength(2);
          expect(state.logged - before.logged).toBe(charges[0] + charges[1]);
          expect(before.remain - state.remain).toBe(charges[0] + charges[1]);
        });
      });

      describe('limits', () => {
        it('closes an idle session on both sides', async () => {
          await realtimeChannel();
          await harness.app.ctx.options.set('RealtimeIdleSeconds', '1');
          const sessionsBefore = upstream.sessions.length;
          const started = Date.now();
          const client = await connect();
          await client.next('session.created');
          expect(await client.closed).toEqual({ code: 4408, reason: 'no frame for 1 s' });
          expect(Date.now() - started).toBeGreaterThanOrEqual(950);
          expect(await upstreamClosed(sessionsBefore)).toBe(1000);
        });

        it('closes a session at its time limit even while frames flow, billing the response it cancels', async () => {
          await realtimeChannel();
          await harness.app.ctx.options.set('RealtimeMaxSeconds', '1');
          const before = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
          const reportedBefore = upstream.reported.length;
          upstream.deltaMs = 20;
          const client = await connect();
          await client.next('session.created');
          client.send(say('go on slowly'));
          client.send({ type: 'response.create', response: { modalities: ['text'] } });
          expect(await client.closed).toEqual({ code: 4410, reason: 'the session reached its time limit of 1 s' });
          const state = await expectNothingHeld();
          for (let waited = 0; waited < 3000 && state.logged === before.logged; waited += 20) {
            await harness.settled();
            Object.assign(state, await ledgerState(harness.app.ctx.db, 1, harness.tokenId));
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          expect(upstream.reported[reportedBefore].status).toBe('cancelled');
          expect(state.logged - before.logged).toBe(expectedCharge(upstream.reported[reportedBefore]));
          expect(before.remain - state.remain).toBe(state.logged - before.logged);
        });
      });

      describe('refusals before the upgrade', () => {
        it('a bad key gets 401 and no upstream session', async () => {
          await realtimeChannel();
          const sessionsBefore = upstream.sessions.length;
          await expect(connect({ key: 'sk-not-a-real-key' })).rejects.toMatchObject({
            status: 401,
            body: { error: { code: 'invalid_api_key' } },
          });
          expect(upstream.sessions.length).toBe(sessionsBefore);
        });

        it('no model, an unknown path, no channel, a key limited to other models', async () => {
          await expect(connect({ path: '/v1/realtime' })).rejects.toMatchObject({ status: 400 });
          await expect(connect({ path: '/v1/elsewhere' })).rejects.toMatchObject({ status: 404 });
          await expect(connect()).rejects.toMatchObject({ status: 503, body: { error: { code: 'model_not_available' } } });
          await realtimeChannel();
          const limited = await harness.admin('POST', '/api/token/', { name: 'chat-only', remain_quota: 100_000, models: 'gpt-4o' });
          await expect(connect({ key: `sk-${limited.data.key}` })).rejects.toMatchObject({
            status: 403,
            body: { error: { code: 'model_not_allowed' } },
          });
          // once the key is known, the refusal is an error log, as on the HTTP routes
          await harness.settled();
          const listed = await harness.admin('GET', '/api/log/?type=5');
          expect(listed.data[0]).toMatchObject({ model_name: MODEL, token_name: 'chat-only', quota: 0 });
          expect(listed.data[0].details).toMatchObject({ operation: 'realtime', status: 403, errorCode: 'model_not_allowed' });
        });

        it('a channel type that serves no realtime is passed by; an upstream that refuses the key gets 502', async () => {
          // Groq's row speaks OpenAI's wire but serves no realtime API
          await harness.addChannel({ name: 'groq', type: 29, key: REALTIME_GOOD_KEY, base_url: upstream.baseUrl, models: MODEL });
          await expect(connect()).rejects.toMatchObject({ status: 503 });
          await realtimeChannel({ key: 'sk-wrong-upstream-key' });
          await expect(connect()).rejects.toMatchObject({ status: 502, body: { error: { code: 'upstream_error' } } });
        });

        it("a session counts as one request against the key's requests per minute", async () => {
          await realtimeChannel();
          const limits = harness.app.ctx.options.get('GroupRateLimits');
          await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ default: { rpm: 1, tpm: 0 } }));
          try {
            const first = await connect();
            await first.next('session.created');
            first.socket.close();
            await first.closed;
            await expect(connect()).rejects.toMatchObject({ status: 429 });
          } finally {
            await harness.app.ctx.options.set('GroupRateLimits', limits);
          }
        });

        it('an exhausted balance is refused with 429 before any upstream session opens', async () => {
          await realtimeChannel();
          const token = await harness.admin('POST', '/api/token/', { name: 'tiny', remain_quota: 10 });
          const sessionsBefore = upstream.sessions.length;
          await expect(connect({ key: `sk-${token.data.key}` })).rejects.toMatchObject({
            status: 429,
            body: { error: { code: 'insufficient_quota' } },
          });
          expect(upstream.sessions.length).toBe(sessionsBefore);
        });

        it('a balance topped up a moment ago opens its session, whatever the cached key still says', async () => {
          await realtimeChannel();
          const token = await harness.admin('POST', '/api/token/', { name: 'topped up', remain_quota: 10 });
          const key = `sk-${token.data.key}`;
          await expect(connect({ key })).rejects.toMatchObject({ status: 429 });
          // a change of quota alone leaves the key's cached row as it was (relayCache.ts): the database is read again
          const updated = await harness.admin('PUT', '/api/token/', { ...token.data, remain_quota: 10_000_000 });
          expect(updated.success).toBe(true);
          const session = await connect({ key });
          await session.next('session.created');
          session.socket.close();
          await session.closed;
        });
      });
    },
  );
}

describe('a shutdown with a session open', () => {
  it('cancels the response in flight, bills it, closes the client with 1001 and leaves nothing held', async () => {
    const path = join(tmpdir(), `switchboard-realtime-${randomBytes(6).toString('hex')}.db`);
    const database = { dialect: 'sqlite' as const, path };
    harness = await startRelayHarness(database);
    upstream = await startRealtimeEmulator();
    try {
      upstream.deltaMs = 20;
      const { before, reportedBefore, client } = await startSession();
      client.send(say('keep talking slowly'));
      client.send({ type: 'response.create', response: { modalities: ['text'] } });
      await client.next('response.text.delta');
      await harness.app.close();
      expect(await client.closed).toEqual({ code: 1001, reason: 'server shutting down' });
      const cancelled = upstream.reported[reportedBefore];
      expect(cancelled.status).toBe('cancelled');

      // the ledger as the next start finds it
      const reopened = await buildTestApp({}, database);
      try {
        const state = await ledgerState(reopened.ctx.db, 1, harness.tokenId);
        expect(state).toMatchObject({ tokenHeld: 0, userHeld: 0, reservationsHeld: 0 });
        expect(state.logged - before.logged).toBe(expectedCharge(cancelled));
        expect(before.remain - state.remain).toBe(expectedCharge(cancelled));
      } finally {
        await reopened.close();
      }
    } finally {
      await harness.emulator.close();
      await upstream.close();
      await rm(path, { force: true });
    }
  });
});
