#!/usr/bin/env node
// Every folder of the server and the console has a rule: the folders it may import at runtime, and the ones
// it may import only as types (erased by the compiler). A folder not named below fails the check until it is
// given a rule, and no two folders may import each other, types included. From the bottom up:
//
//   common/                 imports nothing of the server or the console: the types and tables both share
//   server/config.ts, passwords.ts, secrets.ts
//                           the environment, password hashing, key generation: common/ only (and each other)
//   server/db/              the schema, the connection, the migrations: config
//   server/repositories/    every query: db, common, secrets; config as types
//   server/protocols/       the client and vendor wire formats, pure functions: common only
//   server/billing/         prices, holds, the ledger: repositories, db, common; protocols as types
//   server/services/        the node's long-lived services (options, sessions, mail, Redis, metrics, jobs):
//                           repositories, db, common, config, clusterMetrics
//   server/webhooks/        events and their delivery: billing, repositories, db, common, config
//   server/relay/           the request path: protocols, billing, services, webhooks, repositories, db, common,
//                           config; never channels/ (what it needs of channel state it is handed)
//   server/channels/        channel tests, balances and automatic disabling: relay and everything below it
//   server/import/          the one-api importer: repositories, db, billing, common, config, secrets, passwords
//   server/audit/           the audit log's hash chain, masking, retention and verify CLI: repositories, db, common, config
//   server/plugins/         Fastify plugins, where the app's context is built: everything above except routes
//   server/routes/          the HTTP routes: everything above
//   server/app.ts, main.ts, cluster.ts, bootstrap.ts, clusterMetrics.ts: the edge (their own rows below)
//
//   src/i18n, src/quota.ts, src/lazyNamed.ts, src/theme.tsx: common only
//   src/dataProvider        the REST client, the envelope, the signed-in user as stored: common
//   src/authProvider        login, roles: dataProvider, common
//   src/layout              the shell and the pieces several screens share: the providers, i18n, common
//   src/resources, src/settings, src/dashboard, src/pages: the screens, above layout and the providers, in that
//                           order (settings may use resources; pages may use all three)
//   src/menu.ts, src/consoleDataProvider.ts: the menu and the data provider made from the resource registry
//   src/App.tsx, src/main.tsx: the top
//
// Tests, benches and scripts may import anything. Packages (bare specifiers, node:*) are not restricted. Each
// violation is printed as `file: imports X (rule)`, and every pair of folders importing each other is listed.
// Exits 1 on any violation, mutual pair, unknown folder or runtime import cycle (importCycles.mjs, for server/
// and src/).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findImportCycles } from './importCycles.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCANNED = ['server', 'common', 'src', 'tests', 'bench', 'scripts'];
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === '__fixtures__') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(m?js|tsx?)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (SOURCE.test(candidate) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

// `import ... from 'x'`, `import 'x'`, `export ... from 'x'` (as in importCycles.mjs), and `import('x')`.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s*)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every relative import of a file: { target (absolute path), spec, typeOnly }. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = [];
  for (const match of text.matchAll(STATEMENT)) {
    const [, keyword, typeKeyword, clause, spec] = match;
    if (!spec.startsWith('.')) continue;
    if (keyword === 'export' && !/\bfrom\b/.test(match[0])) continue;
    let typeOnly = Boolean(typeKeyword);
    const braces = clause.match(/^\{([\s\S]*)\}$/);
    if (braces) {
      const names = braces[1]
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) typeOnly = true;
    }
    const target = resolveImport(file, spec);
    if (target) found.push({ target, spec, typeOnly });
  }
  for (const [, spec] of text.matchAll(DYNAMIC)) {
    if (!spec.startsWith('.')) continue;
    const target = resolveImport(file, spec);
    if (target) found.push({ target, spec, typeOnly: false });
  }
  return found;
}

const SERVER_BASE = ['common', 'server/config.ts', 'server/passwords.ts', 'server/secrets.ts'];
const BELOW_RELAY = [
  ...SERVER_BASE,
  'server/db',
  'server/repositories',
  'server/protocols',
  'server/billing',
  'server/services',
  'server/webhooks',
];
const BELOW_PLUGINS = [
  ...BELOW_RELAY,
  'server/relay',
  'server/channels',
  'server/import',
  'server/audit',
  'server/clusterMetrics.ts',
  'server/bootstrap.ts',
];
const CONSOLE_BASE = ['common', 'src/i18n', 'src/quota.ts', 'src/lazyNamed.ts', 'src/theme.tsx', 'src/shims'];
const CONSOLE_BELOW_SCREENS = [...CONSOLE_BASE, 'src/dataProvider', 'src/authProvider', 'src/layout'];

/**
 * Each unit (a folder, or a file at the top of server/ or src/) with what it may import: `runtime` at run time
 * (and as types), `types` only as types. A unit may always import itself.
 */
const UNITS = {
  common: { runtime: [] },
  'server/config.ts': { runtime: ['common', 'server/passwords.ts'] },
  'server/passwords.ts': { runtime: ['common'] },
  'server/secrets.ts': { runtime: ['common'] },
  'server/db': { runtime: [...SERVER_BASE] },
  'server/repositories': { runtime: [...SERVER_BASE, 'server/db'] },
  'server/protocols': { runtime: ['common'] },
  'server/billing': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories'], types: ['server/protocols'] },
  'server/clusterMetrics.ts': { runtime: [...SERVER_BASE] },
  'server/services': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories', 'server/clusterMetrics.ts'] },
  'server/webhooks': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories', 'server/billing'] },
  'server/relay': { runtime: BELOW_RELAY },
  'server/channels': { runtime: [...BELOW_RELAY, 'server/relay'] },
  'server/import': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories', 'server/billing'] },
  'server/audit': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories'] },
  'server/bootstrap.ts': { runtime: [...SERVER_BASE, 'server/db', 'server/repositories'] },
  'server/plugins': { runtime: BELOW_PLUGINS },
  'server/routes': { runtime: [...BELOW_PLUGINS, 'server/plugins'] },
  'server/telemetry': { runtime: [...BELOW_PLUGINS, 'server/plugins'] },
  'server/app.ts': { runtime: [...BELOW_PLUGINS, 'server/plugins', 'server/routes', 'server/telemetry'] },
  'server/cluster.ts': { runtime: [...BELOW_PLUGINS] },
  'server/main.ts': { runtime: [...BELOW_PLUGINS, 'server/plugins', 'server/app.ts', 'server/cluster.ts'] },
  'src/i18n': { runtime: ['common'] },
  'src/quota.ts': { runtime: ['common'] },
  'src/lazyNamed.ts': { runtime: [] },
  'src/theme.tsx': { runtime: ['common'] },
  'src/shims': { runtime: [] },
  'src/dataProvider': { runtime: [...CONSOLE_BASE] },
  'src/authProvider': { runtime: [...CONSOLE_BASE, 'src/dataProvider'] },
  'src/layout': { runtime: [...CONSOLE_BASE, 'src/dataProvider', 'src/authProvider'] },
  'src/resources': { runtime: [...CONSOLE_BELOW_SCREENS] },
  'src/settings': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/resources'] },
  'src/dashboard': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/resources'] },
  'src/pages': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/resources', 'src/settings', 'src/dashboard'] },
  'src/menu.ts': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/resources'] },
  'src/consoleDataProvider.ts': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/resources'] },
  'src/App.tsx': {
    runtime: [
      ...CONSOLE_BELOW_SCREENS,
      'src/resources',
      'src/settings',
      'src/dashboard',
      'src/pages',
      'src/menu.ts',
      'src/consoleDataProvider.ts',
    ],
  },
  'src/main.tsx': { runtime: [...CONSOLE_BELOW_SCREENS, 'src/App.tsx'] },
};

/** The unit a repo-relative path belongs to: a folder under server/ or src/, a file at their top, or common; null outside them. */
export function unitOf(path) {
  const parts = path.split('/');
  if (parts[0] === 'common') return 'common';
  if (parts[0] !== 'server' && parts[0] !== 'src') return null;
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
}

/** Why `from` may not import `to` (repo-relative), or null when it may. */
function refusal(from, to, typeOnly) {
  const source = unitOf(from);
  const target = unitOf(to);
  if (source === null || target === null || source === target) return null;
  const rule = UNITS[source];
  if (!rule) return `no rule for ${source}: add one to scripts/importBoundaries.mjs`;
  if (rule.runtime.includes(target)) return null;
  if (typeOnly && rule.types?.includes(target)) return null;
  return `${source} may not import ${target}${rule.types?.includes(target) ? ' at runtime' : ''}`;
}

/** Pairs of units the table itself lets import each other (it must allow none). */
export function mutualRules() {
  const pairs = [];
  for (const [unit, rule] of Object.entries(UNITS)) {
    for (const other of [...rule.runtime, ...(rule.types ?? [])]) {
      const back = UNITS[other];
      if (unit < other && back && [...back.runtime, ...(back.types ?? [])].includes(unit)) pairs.push(`${unit} <-> ${other}`);
    }
  }
  return pairs;
}

/** Boundary violations of the tree: { file, imports, rule, typeOnly }, value imports first. */
export function findBoundaryViolations(root = repoRoot) {
  const violations = [];
  for (const top of SCANNED) {
    const dir = join(root, top);
    if (!existsSync(dir)) continue;
    for (const file of walk(dir)) {
      const from = relative(root, file);
      const seen = new Set();
      for (const { target, typeOnly } of importsOf(file)) {
        const to = relative(root, target);
        const rule = refusal(from, to, typeOnly);
        if (rule === null) continue;
        const key = `${to}\0${typeOnly}`;
        if (seen.has(key)) continue;
        seen.add(key);
        violations.push({ file: from, imports: to, rule, typeOnly });
      }
    }
  }
  return violations.sort(
    (a, b) => Number(a.typeOnly) - Number(b.typeOnly) || a.file.localeCompare(b.file) || a.imports.localeCompare(b.imports),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = findBoundaryViolations();
  for (const v of violations) console.log(`${v.file}: imports ${v.imports} (${v.rule}${v.typeOnly ? ', type-only' : ''})`);
  const mutual = mutualRules();
  for (const pair of mutual) console.log(`the rules let two units import each other: ${pair}`);
  const cycles = [...findImportCycles(join(repoRoot, 'server')), ...findImportCycles(join(repoRoot, 'src'))];
  for (const cycle of cycles) console.log(`cycle (${cycle.length} modules):\n  ${cycle.join('\n  ')}`);
  console.log(
    `\n${violations.length} boundary violation(s) (${violations.filter((v) => v.typeOnly).length} type-only), ` +
      `${mutual.length} mutual rule(s), ${cycles.length} runtime import cycle(s)`,
  );
  if (violations.length > 0 || mutual.length > 0 || cycles.length > 0) process.exit(1);
}
