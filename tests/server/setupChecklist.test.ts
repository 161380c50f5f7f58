// The first-run checklist (GET /api/setup/checklist): a real app on SQLite,
// listening, with the OpenAI emulator upstream. Each step is done the way root
// would do it in the console, and the checklist must tick it from what that
// left in the database; then the dismissal, its lapse when every channel is
// gone, and the refusal of anyone but root.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SetupChecklist } from '../../common/setupChecklist';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD, sessionCookieOf } from '../support/app';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

let app: FastifyInstance;
let emulator: OpenAIEmulator;
let baseUrl: string;
let root: string;

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, cookie = root) =>
  asBrowser(app, cookie, { method, url, payload: payload as never });
const checklist = async (): Promise<SetupChecklist> => {
  const body = (await call('GET', '/api/setup/checklist')).json();
  expect(body.success).toBe(true);
  return body.data;
};
const addChannel = async (key = 'sk-good') => {
  const created = (
    await call('POST', '/api/channel/', { name: key, type: 8, key, base_url: emulator.baseUrl, models: 'gpt-4o-mini,gpt-4o' })
  ).json();
  expect(created.success).toBe(true);
  return created.data.ids[0] as number;
};

beforeAll(async () => {
  emulator = await startOpenAIEmulator();
  app = await buildTestApp();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app?.close();
  await emulator?.close();
});

describe('setup checklist', () => {
  it('starts with every step open and nothing dismissed', async () => {
    expect(await checklist()).toEqual({
      password_changed: false,
      channel_added: false,
      channel_tested: false,
      token_created: false,
      request_sent: false,
      dismissed: false,
      model: '',
    });
  });

  it('ticks the password once root changes it, and not before', async () => {
    // a profile edit without a new password leaves the initial one in place
    expect((await call('PUT', '/api/user/self', { display_name: 'Root' })).json().success).toBe(true);
    expect((await checklist()).password_changed).toBe(false);
    const changed = await call('PUT', '/api/user/self', { password: 'a-new-root-password', original_password: ROOT_PASSWORD });
    expect(changed.json().success).toBe(true);
    root = sessionCookieOf(changed);
    expect((await checklist()).password_changed).toBe(true);
  });

  it('cannot be dismissed while no channel exists', async () => {
    const refused = (await call('POST', '/api/setup/checklist/dismiss')).json();
    expect(refused).toMatchObject({ success: false, message: expect.stringMatching(/add a channel first/) });
    expect((await checklist()).dismissed).toBe(false);
  });

  it('ticks the channel when one is added, and its test only when a test passes', async () => {
    const failing = await addChannel('sk-dead');
    expect(await checklist()).toMatchObject({ channel_added: true, channel_tested: false, model: 'gpt-4o-mini' });
    expect((await call('GET', `/api/channel/test/${failing}`)).json().success).toBe(false);
    expect((await checklist()).channel_tested).toBe(false);

    const working = await addChannel('sk-good');
    expect((await call('GET', `/api/channel/test/${working}`)).json().success).toBe(true);
    expect((await checklist()).channel_tested).toBe(true);
    expect((await call('DELETE', `/api/channel/${failing}/`)).json().success).toBe(true);
  });

  it('ticks the token when one is created, and the request once a relayed call is logged', async () => {
    const token = (await call('POST', '/api/token/', { name: 'first', remain_quota: 10_000_000 })).json();
    expect(token.success).toBe(true);
    expect(await checklist()).toMatchObject({ token_created: true, request_sent: false });

    const relayed = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.data.key}` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(relayed.status).toBe(200);
    await relayed.text();
    await bookkeepingFor(app.ctx, app.log).idle();
    expect(await checklist()).toEqual({
      password_changed: true,
      channel_added: true,
      channel_tested: true,
      token_created: true,
      request_sent: true,
      dismissed: false,
      model: 'gpt-4o-mini',
    });
  });

  it('stays dismissed while a channel exists, and comes back for good once every channel is deleted', async () => {
    expect((await call('POST', '/api/setup/checklist/dismiss')).json().success).toBe(true);
    expect(app.ctx.options.get('SetupChecklistDismissed')).toBe('true');
    expect((await checklist()).dismissed).toBe(true);

    const channels = await app.ctx.db.selectFrom('channels').select('id').execute();
    for (const { id } of channels) expect((await call('DELETE', `/api/channel/${id}/`)).json().success).toBe(true);
    expect(await checklist()).toMatchObject({ channel_added: false, channel_tested: false, dismissed: false });
    expect(app.ctx.options.get('SetupChecklistDismissed')).toBe('false');

    // a channel added afterwards does not bring the old dismissal back
    await addChannel();
    expect((await checklist()).dismissed).toBe(false);
  });

  it('refuses everyone but root', async () => {
    await register(app, 'plainuser');
    await register(app, 'someadmin');
    await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', '=', 'someadmin').execute();
    for (const username of ['plainuser', 'someadmin']) {
      const cookie = await login(app, username, 'password-123');
      for (const [method, url] of [
        ['GET', '/api/setup/checklist'],
        ['POST', '/api/setup/checklist/dismiss'],
      ] as const) {
        const body = (await call(method, url, undefined, cookie)).json();
        expect(body).toMatchObject({ success: false, message: 'insufficient permission' });
        expect(body.data).toBeUndefined();
      }
    }
    expect((await asBrowser(app, undefined, { method: 'GET', url: '/api/setup/checklist' })).statusCode).toBe(401);
  });
});
