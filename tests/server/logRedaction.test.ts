// The server log, captured line by line at level info while real traffic
// goes through: every line is JSON; lines about a request carry its
// X-Request-Id, and the relay's its user, token and channel ids; no line ever
// holds an API key (header or Gemini's ?key=), a session cookie, a password,
// a channel key or a prompt.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions, maskSecretQuery } from '../../server/plugins/logging';
import { ROOT_PASSWORD, sessionCookieOf } from '../support/app';
import { startRelayHarness, type RelayHarness } from './relay/harness';

/** Collects what the logger writes, one parsed object per line. */
function captureLines() {
  const lines: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n')) !== -1) {
        lines.push(pending.slice(0, end));
        pending = pending.slice(end + 1);
      }
      done();
    },
  });
  return { stream, lines };
}

const PROMPT_MARKER = 'PROMPT-MARKER-the-secret-plans-7f3a';

describe('server log', () => {
  const captured = captureLines();
  let harness: RelayHarness;
  let channelId: number;
  let cookieValue: string;

  beforeAll(async () => {
    harness = await startRelayHarness(undefined, {}, { logger: { level: 'info', stream: captured.stream } });
    channelId = await harness.addChannel({ name: 'emu', key: 'sk-good' });
    const signIn = await fetch(`${harness.baseUrl}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
    });
    cookieValue = sessionCookieOf({ headers: { 'set-cookie': signIn.headers.getSetCookie() } } as never);
    await fetch(`${harness.baseUrl}/api/user/self`, { headers: { cookie: cookieValue, 'x-request-id': 'console-call-1' } });

    const chat = { model: 'gpt-4', messages: [{ role: 'user', content: PROMPT_MARKER }] };
    await (await harness.post('/v1/chat/completions', chat, undefined, { 'x-request-id': 'relay-call-1' })).text();
    await (await harness.post('/v1/chat/completions', { ...chat, stream: true }, undefined, { 'x-request-id': 'relay-call-2' })).text();
    // Gemini's clients put the key in the query string
    const gemini = await fetch(`${harness.baseUrl}/v1beta/models/gpt-4:generateContent?key=${harness.apiKey}&alt=json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'gemini-call-1' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: PROMPT_MARKER }] }] }),
    });
    await gemini.text();
    // an upstream failure is logged (warn) with the ids, never with the channel's key
    await harness.app.ctx.db.deleteFrom('abilities').execute();
    await harness.app.ctx.db.deleteFrom('channels').execute();
    channelId = await harness.addChannel({ name: 'down', key: 'sk-down' });
    await (await harness.post('/v1/chat/completions', chat, undefined, { 'x-request-id': 'relay-call-3' })).text();
    await harness.settled();
  });
  afterAll(() => harness?.close());

  const parsed = () => captured.lines.map((line) => JSON.parse(line) as Record<string, any>);

  it('writes JSON lines that carry the request id, and the relay lines the user, token and channel ids', () => {
    const lines = parsed();
    expect(lines.length).toBeGreaterThan(5);
    const consoleLines = lines.filter((line) => line.requestId === 'console-call-1');
    expect(consoleLines.map((line) => line.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    expect(consoleLines.find((line) => line.msg === 'incoming request')!.req).toEqual({
      method: 'GET',
      url: '/api/user/self',
      remoteAddress: '127.0.0.1',
    });
    // once signed in, the console request's lines say who it was
    expect(consoleLines.find((line) => line.msg === 'request completed')).toMatchObject({ userId: 1, res: { statusCode: 200 } });

    const relayed = lines.find((line) => line.msg === 'relay request finished' && line.requestId === 'relay-call-1');
    expect(relayed).toMatchObject({
      userId: 1,
      tokenId: harness.tokenId,
      model: 'gpt-4',
      operation: 'chat',
      protocol: 'openai',
      status: 200,
      outcome: 'settled',
    });
    expect(relayed!.channelId).toBeGreaterThan(0);
    expect(lines.find((line) => line.msg === 'relay request finished' && line.requestId === 'relay-call-2')).toMatchObject({
      status: 200,
      outcome: 'settled',
    });
    expect(lines.find((line) => line.requestId === 'gemini-call-1' && line.msg === 'relay request finished')).toMatchObject({
      protocol: 'gemini',
    });

    const failed = lines.find((line) => line.msg === 'upstream failed' && line.requestId === 'relay-call-3');
    expect(failed).toMatchObject({ level: 40, userId: 1, tokenId: harness.tokenId, channelId, status: 500 });
  });

  it('never writes keys, cookies, passwords, channel keys or prompts', () => {
    const everything = captured.lines.join('\n');
    const apiKeyBody = harness.apiKey.replace(/^sk-/, '');
    expect(everything).not.toContain(apiKeyBody);
    expect(everything).not.toContain(cookieValue.split('=')[1]);
    expect(everything).not.toContain(ROOT_PASSWORD);
    expect(everything).not.toContain('sk-down');
    expect(everything).not.toContain(PROMPT_MARKER);
    expect(everything).not.toMatch(/authorization/i);
    // the Gemini call's URL is logged with its key masked
    const geminiLine = parsed().find((line) => line.requestId === 'gemini-call-1' && line.req);
    expect(geminiLine?.req.url).toBe('/v1beta/models/gpt-4:generateContent?key=[redacted]&alt=json');
  });

  it('redacts the usual places a secret could be handed to the logger', () => {
    const { stream, lines } = captureLines();
    const options = loggerOptions({ level: 'info', stream }) as Record<string, unknown>;
    const logger = pino({ ...options, stream: undefined } as never, stream);
    logger.info(
      {
        headers: { authorization: 'Bearer sk-leak-1', cookie: 'session=leak-2', 'x-api-key': 'leak-3' },
        channel: { key: 'sk-leak-4', id: 7 },
        password: 'leak-5',
        request: { messages: [{ role: 'user', content: 'leak-6' }], prompt: 'leak-7', body: 'leak-8' },
      },
      'a careless line',
    );
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(lines[0]).not.toMatch(/leak-\d/);
    expect(line.channel.id).toBe(7);
    expect(line.headers.authorization).toBe('[redacted]');
    expect(maskSecretQuery('/api/oauth/github?code=abc&state=def&x=1')).toBe('/api/oauth/github?code=[redacted]&state=[redacted]&x=1');
  });
});
