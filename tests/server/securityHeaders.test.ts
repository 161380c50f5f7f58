// Every response carries the security headers, whichever part of the gateway
// answers it: console pages and static files, /api, /v1 (the fast path, which
// Fastify never sees, included), 404s and errors. HSTS only over TLS, which
// behind a proxy means X-Forwarded-Proto: https under TRUSTED_PROXY.
import type { FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../support/app';

let consoleDir: string;
let app: FastifyInstance;
let trusted: FastifyInstance;
let base: string;
let trustedBase: string;

beforeAll(async () => {
  consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-headers-'));
  mkdirSync(join(consoleDir, 'assets'));
  writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(consoleDir, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(consoleDir, 'logo.png'), 'not really a png');
  app = await buildTestApp({ consoleDir });
  trusted = await buildTestApp({ consoleDir, trustProxy: true });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  trustedBase = await trusted.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app.close();
  await trusted.close();
  rmSync(consoleDir, { recursive: true, force: true });
});

const REQUESTS: Array<[string, string, RequestInit?]> = [
  ['console page', '/login'],
  ['index', '/'],
  ['static file outside /assets', '/logo.png'],
  ['api', '/api/status'],
  ['api 404', '/api/no-such-thing'],
  ['api error', '/api/user/self'],
  ['bad JSON body', '/api/user/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }],
  [
    'relay fast path',
    '/v1/chat/completions',
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"gpt-4"}' },
  ],
  ['relay via Fastify', '/v1/models'],
  ['relay 404', '/v1/nothing'],
];

function expectSecurityHeaders(response: Response, label: string) {
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp, label).toContain("script-src 'self'");
  expect(csp, label).toContain("frame-ancestors 'none'");
  expect(csp, label).toContain("object-src 'none'");
  expect(csp, label).toContain("base-uri 'self'");
  expect(response.headers.get('x-content-type-options'), label).toBe('nosniff');
  expect(response.headers.get('x-frame-options'), label).toBe('DENY');
  expect(response.headers.get('referrer-policy'), label).toBe('strict-origin-when-cross-origin');
}

describe('security headers', () => {
  it.each(REQUESTS)('are on the %s response', async (label, path, init) => {
    const response = await fetch(base + path, init);
    await response.arrayBuffer();
    expectSecurityHeaders(response, label);
    expect(response.headers.get('strict-transport-security'), label).toBeNull();
  });

  it('are only nosniff (and HSTS over https) on the hashed build files, which are never documents', async () => {
    const response = await fetch(`${base}/assets/app.js`);
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBeNull();
    expect(response.headers.get('x-frame-options')).toBeNull();
  });

  it('are on responses to app.inject too (no server in between)', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/status' });
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
  });

  it('add HSTS when a trusted proxy says the client came over https', async () => {
    for (const path of ['/', '/api/status', '/v1/chat/completions']) {
      const init: RequestInit = path.startsWith('/v1')
        ? { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' }, body: '{}' }
        : { headers: { 'x-forwarded-proto': 'https' } };
      const response = await fetch(trustedBase + path, init);
      await response.arrayBuffer();
      expect(response.headers.get('strict-transport-security'), path).toBe('max-age=31536000; includeSubDomains');
    }
    const plain = await fetch(`${trustedBase}/api/status`, { headers: { 'x-forwarded-proto': 'http' } });
    expect(plain.headers.get('strict-transport-security')).toBeNull();
  });

  it('leave HSTS off when X-Forwarded-Proto comes from an untrusted client', async () => {
    const response = await fetch(`${base}/api/status`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(response.headers.get('strict-transport-security')).toBeNull();
  });

  it('let the Turnstile script in only while the bot check is on', async () => {
    expect((await fetch(`${base}/login`)).headers.get('content-security-policy')).not.toContain('challenges.cloudflare.com');
    await app.ctx.options.set('TurnstileCheckEnabled', 'true');
    expect((await fetch(`${base}/login`)).headers.get('content-security-policy')).toContain(
      "script-src 'self' https://challenges.cloudflare.com",
    );
  });
});
