// What this machine can check of the deployment files without Docker (no
// daemon, no compose, no images here): the Dockerfile's stages and the rules
// they keep, the compose file's services against the proxy's upstreams, the
// proxy's streaming settings; and how WORKERS is read, with the refusals a
// real process gives (SQLite with several workers, workers that cannot start).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { workersFromEnv } from '../../server/config';
import { freePort, repoRoot } from '../e2e/support/gateway';
import { sqliteAddonEnv } from '../support/gatewayCommand';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('the Dockerfile', () => {
  it("runs a Node that package.json's engines accept, and which is not past its end of life", () => {
    const major = Number(read('Dockerfile').match(/^FROM node:(\d+)/m)?.[1]);
    const engines = JSON.parse(read('package.json')).engines.node as string;
    // engines lists each supported major's floor: 20.19 (the machines' own), 22.12 and 24
    expect(engines).toBe('^20.19.0 || ^22.12.0 || >=24.0.0');
    expect(engines).toContain(`${major}.`);
    // Node 20 reached its end of life in April 2026; the image ships a maintained LTS
    expect(major).toBeGreaterThanOrEqual(24);
    expect(major % 2).toBe(0);
  });

  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1];

  it('builds in one stage and runs from a slim one holding only what runs, as a user without privileges', () => {
    expect(stages).toHaveLength(2);
    // Node 24 LTS in both stages, one major in both (better-sqlite3's addon is compiled in the first for the second)
    const nodeMajors = stages.map((stage) => stage.match(/^node:(\d+)[-\s]/)?.[1]);
    expect(nodeMajors).toEqual(['24', '24']);
    expect(stages[0]).toMatch(/^node:24-bookworm AS build/);
    expect(stages[0]).toMatch(/RUN npm ci/);
    expect(stages[0]).toMatch(/npm run build/);
    expect(stages[0]).toMatch(/npm prune --omit=dev/);
    expect(runtime).toMatch(/^node:24-bookworm-slim AS runtime/);
    // no package manager runs in the final stage: no compilers, no dev dependencies come in
    expect(runtime).not.toMatch(/apt-get|npm (ci|install)|build-essential|g\+\+/);
    const copied = [...runtime.matchAll(/^COPY --from=build (.+) \S+$/gm)].flatMap((match) => match[1].split(/\s+/));
    expect(copied.sort()).toEqual([
      '/app/build/gateway.mjs',
      '/app/build/gateway.mjs.map',
      '/app/dist',
      '/app/node_modules',
      '/app/package.json',
    ]);
    const user = runtime.match(/^USER (\S+)$/m)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)$/);
  });

  it('exposes the port it listens on, checks its health on it, and starts as npm start does', () => {
    const port = runtime.match(/^ENV .*\bPORT=(\d+)/m)?.[1];
    expect(runtime).toMatch(new RegExp(`^EXPOSE ${port}$`, 'm'));
    expect(runtime).toMatch(
      /^HEALTHCHECK .*CMD \["node", "-e", ".*fetch\('http:\/\/127\.0\.0\.1:'\+\(process\.env\.PORT\|\|3000\)\+'\/healthz'\)/m,
    );
    const command = JSON.parse(runtime.match(/^CMD (\[.*\])$/m)![1]) as string[];
    // the Node flags of package.json's start script, then the bundle npm start runs
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start.split(/\s+/);
    const startFlags = start.filter((word) => word.startsWith('--'));
    expect(command[0]).toBe('node');
    expect(command.slice(1, 1 + startFlags.length)).toEqual(startFlags);
    expect(command[command.length - 1]).toBe('build/gateway.mjs');
  });

  it('keeps, after npm prune --omit=dev, every package the bundle loads', async () => {
    // @ts-expect-error: a plain ES module of the build scripts, without type declarations
    const { bundleOptions } = (await import('../../scripts/buildServer.mjs')) as {
      bundleOptions: (entry: string, outfile: string) => BuildOptions;
    };
    // esbuild's own list of what the bundle imports from outside itself (the bundled packages' imports are inside)
    const { metafile } = await build({
      ...bundleOptions('server/main.ts', join(tmpdir(), 'gateway-dependency-check.mjs')),
      write: false,
      metafile: true,
    });
    const externals = Object.values(metafile.outputs).flatMap((output) =>
      output.imports.filter((imported) => imported.external).map((imported) => imported.path),
    );
    const packages = new Set(
      externals
        .filter((name) => !name.startsWith('node:') && !isBuiltin(name))
        .map((name) =>
          name
            .split('/')
            .slice(0, name.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    );
    const { dependencies } = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    // the ones loaded on first use stay in node_modules: the database drivers, Redis, ws, Bedrock's event-stream
    // codec and Vertex's library, the S3 file store's, the 2FA packages, the mailer; better-sqlite3 for its native addon
    const lazyPackages = [
      'pg',
      'mysql2',
      'ioredis',
      'ws',
      'jose',
      '@smithy/eventstream-codec',
      '@aws-sdk/client-s3',
      '@aws-sdk/lib-storage',
    ];
    for (const lazy of [...lazyPackages, 'otpauth', 'nodemailer', 'better-sqlite3']) expect(packages).toContain(lazy);
    expect([...packages].filter((name) => !(name in dependencies))).toEqual([]);
    // gpt-tokenizer's encodings are required by name at run time (tokenCount.ts), out of esbuild's sight
    expect(dependencies).toHaveProperty('gpt-tokenizer');
  });

  it('is built from a context without dependencies, builds, secrets or tests', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    for (const entry of ['node_modules', 'dist', 'build', 'data', '.git', '.env', 'tests']) expect(ignored).toContain(entry);
  });
});

describe('docker-compose.yml and the proxy', () => {
  const compose = read('docker-compose.yml');
  const nginx = read('deploy/nginx.conf');
  /** The top-level services: two-space-indented keys under `services:`. */
  const services = [
    ...compose
      .slice(compose.indexOf('\nservices:') + 1)
      .split(/\n(?=\S)/)[0]
      .matchAll(/^ {2}([a-z0-9-]+):$/gm),
  ].map((match) => match[1]);

  it('runs two gateway nodes from one definition, PostgreSQL, Redis and the proxy', () => {
    expect(services.sort()).toEqual(['gateway-1', 'gateway-2', 'postgres', 'proxy', 'redis']);
    expect(compose).toMatch(/gateway-1:\n\s+<<: \*gateway/);
    expect(compose).toMatch(/gateway-2:\n\s+<<: \*gateway/);
    // every node shares the database, Redis and the session key, and trusts the proxy in front
    const gateway = compose.slice(compose.indexOf('x-gateway: &gateway'), compose.indexOf('\nservices:'));
    expect(gateway).toMatch(/SQL_DSN: postgres:\/\/\S+@postgres:5432\//);
    expect(gateway).toMatch(/REDIS_CONN_STRING: redis:\/\/redis:6379/);
    expect(gateway).toMatch(/SESSION_SECRET: \$\{SESSION_SECRET:\?/);
    expect(gateway).toMatch(/TRUSTED_PROXY: "true"/);
    // longer than the gateway's default grace (60 s), so a stop is never cut by Docker's SIGKILL
    expect(Number(gateway.match(/stop_grace_period: (\d+)s/)?.[1])).toBeGreaterThan(60);
    expect(compose).toMatch(/\.\/deploy\/nginx\.conf:\/etc\/nginx\/conf\.d\/default\.conf:ro/);
  });

  it('sends the proxy to both nodes, streaming unbuffered with long read timeouts', () => {
    const upstreams = [...nginx.matchAll(/^\s*server (\S+?):(\d+)\b/gm)].map((match) => `${match[1]}:${match[2]}`);
    const port = read('Dockerfile').match(/^ENV .*\bPORT=(\d+)/m)![1];
    expect(upstreams).toEqual([`gateway-1:${port}`, `gateway-2:${port}`]);
    for (const directive of [
      'proxy_buffering off;',
      'proxy_request_buffering off;',
      'proxy_http_version 1.1;',
      'proxy_pass http://switchboard;',
    ])
      expect(nginx).toContain(directive);
    expect(Number(nginx.match(/proxy_read_timeout (\d+)s;/)?.[1])).toBeGreaterThanOrEqual(300);
    // a POST is never retried on the other node once sent
    expect(nginx).toMatch(/proxy_next_upstream error;/);
  });
});

describe('WORKERS', () => {
  const postgres = { dialect: 'postgres', connectionString: 'postgres://127.0.0.1/x' } as const;
  const sqlite = { dialect: 'sqlite', path: ':memory:' } as const;

  it('defaults to one per core on PostgreSQL and MySQL and to one on SQLite, and refuses more than one on SQLite', () => {
    expect(workersFromEnv({}, postgres, 6)).toBe(6);
    expect(workersFromEnv({ WORKERS: 'auto' }, { dialect: 'mysql', connectionString: 'mysql://127.0.0.1/x' }, 3)).toBe(3);
    expect(workersFromEnv({}, sqlite, 6)).toBe(1);
    expect(workersFromEnv({ WORKERS: '1' }, sqlite)).toBe(1);
    expect(workersFromEnv({ WORKERS: ' 4 ' }, postgres)).toBe(4);
    expect(workersFromEnv({}, postgres)).toBe(availableParallelism());
    expect(() => workersFromEnv({ WORKERS: '2' }, sqlite)).toThrow('WORKERS=2 needs PostgreSQL or MySQL (SQL_DSN)');
    for (const wrong of ['0', '-1', '1.5', 'two'])
      expect(() => workersFromEnv({ WORKERS: wrong }, postgres)).toThrow(
        `WORKERS must be a whole number of processes, 1 or more (or auto), got ${wrong}`,
      );
  });

  /** Runs server/main.ts with `env` until it exits; its code and output. */
  const runToExit = async (env: Record<string, string>) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-workers-refused-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        ...sqliteAddonEnv(),
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        DATA_DIR: dataDir,
        CONSOLE_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((exited) => child.once('exit', (exitCode) => exited(exitCode)));
    rmSync(dataDir, { recursive: true, force: true });
    return { code, output };
  };

  it('stops a gateway asked for two workers on SQLite before it opens anything, saying why', async () => {
    const { code, output } = await runToExit({ WORKERS: '2' });
    expect(code).toBe(1);
    expect(output).toContain(
      '[switchboard] WORKERS=2 needs PostgreSQL or MySQL (SQL_DSN): a SQLite file is served by one process; leave WORKERS unset or 1',
    );
    expect(output).not.toContain('gateway and console on');
  });

  it('gives up, after a few tries, on workers that cannot start (a database that is not there)', async () => {
    const closedPort = await freePort();
    const { code, output } = await runToExit({
      WORKERS: '2',
      SQL_DSN: `postgres://postgres@127.0.0.1:${closedPort}/none`,
      SQL_CONNECT_TIMEOUT_MS: '500',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/workers could not start \(3 exits in a row, the last with code 1\): giving up/);
    expect(output).not.toContain('gateway and console on');
  });
});

describe('npm start', () => {
  // The quick start's output, once dependencies are installed and the console built (as CI has them here): a line
  // per phase, the root password box, and the line saying where the gateway listens and how long it took. No
  // warning, no tool's own chatter (a fresh clone adds two lines: the install, then its time).
  it('prints a few lines of its own, the password box, and when it was ready', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-quiet-start-'));
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...sqliteAddonEnv(), HOST: '127.0.0.1', PORT: String(await freePort()), DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // what a newcomer reads until the gateway is ready (the stop that follows logs its own warning)
    let printed: string;
    try {
      await expect.poll(() => output, { timeout: 120_000, interval: 200 }).toMatch(/ready [\d.]+ s after start\n/);
      printed = output;
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
    const lines = printed.split('\n').filter((line) => line.trim() !== '');
    const box = lines.filter((line) => line.startsWith('*'));
    const rest = lines.filter((line) => !line.startsWith('*'));
    expect(box.join('\n')).toMatch(/username: root, password: \S{12,}/);
    expect(rest.length).toBeLessThanOrEqual(10);
    // every line outside the box is the gateway's own, and none is a warning
    for (const line of rest) expect(line).toMatch(/^\[switchboard\] /);
    expect(printed).not.toMatch(/warn|deprecat|EBADENGINE/i);
    expect(rest.at(-1)).toMatch(
      /^\[switchboard\] gateway and console on http:\/\/localhost:\d+ \(SQLite at .+\); ready [\d.]+ s after start$/,
    );
  }, 180_000);
});
