// The built console is served with an SPA fallback on the spec's real paths;
// unknown API paths get JSON 404s; trailing slashes are optional.
import type { FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { precompressFolder } from '../../scripts/precompress';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
const BIG_BUNDLE = Array.from({ length: 400 }, (_, index) => `export const value${index} = 'switchboard ${index}';`).join('\n');
let consoleDir: string;
beforeAll(async () => {
  consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-console-'));
  writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Switchboard console</title>');
  mkdirSync(join(consoleDir, 'assets'));
  writeFileSync(join(consoleDir, 'assets', 'app-abc123.js'), 'console.log(1)');
  // a bundle big enough to be compressed at build time, compressed as the build does it
  writeFileSync(join(consoleDir, 'assets', 'big-def456.js'), BIG_BUNDLE);
  precompressFolder(consoleDir);
  app = await buildTestApp({ consoleDir });
});
afterAll(async () => {
  await app.close();
  rmSync(consoleDir, { recursive: true, force: true });
});

describe('console and fallbacks', () => {
  it("answers the spec's routes with index.html", async () => {
    for (const url of ['/', '/channel', '/token/add', '/user/edit/3', '/login?expired=true', '/setting']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toContain('Switchboard console');
      expect(response.headers['content-type'], url).toMatch(/text\/html/);
      expect(response.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('serves hashed assets with a long cache lifetime', async () => {
    const response = await app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toContain('immutable');
  });

  it('sends the precompressed copy a browser accepts, brotli first, with Content-Encoding and Vary', async () => {
    const asked = async (acceptEncoding: string | undefined) => {
      const response = await app.inject({
        method: 'GET',
        url: '/assets/big-def456.js',
        headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/javascript/);
      expect(response.headers['cache-control']).toContain('immutable');
      return response;
    };
    const brotli = await asked('gzip, deflate, br, zstd');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(brotli.rawPayload).toString()).toBe(BIG_BUNDLE);
    expect(brotli.rawPayload.length).toBeLessThan(BIG_BUNDLE.length / 4);

    const gzip = await asked('gzip, deflate');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(BIG_BUNDLE);

    for (const plain of [undefined, 'identity']) {
      const response = await asked(plain);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.body).toBe(BIG_BUNDLE);
    }
    // a file too small to be worth a copy is sent as it is, whatever the browser accepts
    const small = await app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body).toBe('console.log(1)');
  });

  it('answers unknown /api and /v1 paths with JSON 404s', async () => {
    const api = await app.inject({ method: 'GET', url: '/api/does-not-exist' });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ success: false, message: 'not found: GET /api/does-not-exist', code: 'not_found' });
    const relay = await app.inject({ method: 'POST', url: '/v1/nothing', payload: {} });
    expect(relay.statusCode).toBe(404);
    expect(relay.json()).toEqual({
      error: { message: 'Invalid URL (POST /v1/nothing)', type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('accepts paths with and without a trailing slash', async () => {
    const root = await login(app, 'root', ROOT_PASSWORD);
    for (const url of ['/api/option', '/api/option/', '/api/user/self', '/api/user/self/', '/api/status/']) {
      const response = await asBrowser(app, root, { method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.json().success, url).toBe(true);
    }
  });

  it('answers a malformed JSON body with a clear envelope, not a crash', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/user/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ success: false, message: 'the request body is not valid JSON' });
  });
});
