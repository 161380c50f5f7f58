// npm run bench:starvation: the starvation scenario alone (bench/starvation.ts),
// on a gateway and an emulator of its own; `npm run bench` runs it after its table.
import { request } from 'undici';
import { placeProcesses, startFlags, startScript, type Started } from './processes';
import { starvationScenario } from './starvation';

const placement = placeProcesses();
const started: Started[] = [];
try {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  const gateway = await startScript('gatewayProcess', {}, startFlags());
  started.push(gateway);
  placement.pinMeasured(gateway.child.pid!);
  const post = async (path: string, body: unknown, cookie?: string) => {
    const response = await request(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });
    const setCookie = response.headers['set-cookie'];
    return { body: (await response.body.json()) as { success: boolean; message: string; data: any }, cookie: String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0] };
  };
  const { cookie } = await post('/api/user/login', { username: 'root', password: 'bench-root-password' });
  await post('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.url, models: 'gpt-3.5-turbo' }, cookie);
  const token = await post('/api/token/', { name: 'flood', unlimited_quota: true }, cookie);
  const lines = await starvationScenario({ gateway: gateway.url, rootCookie: cookie, floodKey: `sk-${token.body.data.key}` });
  console.log([`# Switchboard starvation scenario (${new Date().toISOString()})`, '', `CPU placement: ${placement.description}.`, '', ...lines].join('\n'));
} finally {
  await Promise.all(started.map((part) => part.stop()));
}
