// The console API calls the benchmark makes to set a gateway up: sign in as
// root, add the emulator as a channel, make keys and users, set options.
import { request } from 'undici';

export const BENCH_ROOT_PASSWORD = 'bench-root-password';

/** One console call; throws with the server's message when it fails. */
export async function consoleCall<Data = unknown>(
  url: string,
  init: { method?: 'GET' | 'POST' | 'PUT'; body?: unknown; cookie?: string } = {},
) {
  const response = await request(url, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...(init.cookie ? { cookie: init.cookie } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const setCookie = response.headers['set-cookie'];
  const body = (await response.body.json()) as { success: boolean; message: string; data: Data };
  if (!body.success) throw new Error(`${url}: ${body.message}`);
  return { body, cookie: String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0] };
}

/** Root's session and an unlimited key on a fresh gateway whose one channel is the emulator, serving `model`. */
export async function prepareGateway(gateway: string, emulator: string, model: string): Promise<{ rootCookie: string; key: string }> {
  const { cookie } = await consoleCall(`${gateway}/api/user/login`, {
    method: 'POST',
    body: { username: 'root', password: BENCH_ROOT_PASSWORD },
  });
  await consoleCall(`${gateway}/api/channel/`, {
    method: 'POST',
    cookie,
    body: { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator, models: model },
  });
  const token = await consoleCall<{ key: string }>(`${gateway}/api/token/`, {
    method: 'POST',
    cookie,
    body: { name: 'bench', unlimited_quota: true },
  });
  return { rootCookie: cookie, key: `sk-${token.body.data.key}` };
}
