#!/usr/bin/env node
// Import boundaries between the server's layers, plus the runtime-cycle check of importCycles.mjs.
//
//   protocols  server/protocols/ imports only common/ (and itself)
//   billing    server/billing/ imports only server/db/, server/repositories/, common/ (and itself)
//   relay      server/relay/ imports server/protocols/, server/billing/, server/db/, server/repositories/,
//              common/ and the node's services (server/services/, server/channels/, server/webhooks/), never
//              the HTTP layer above it (server/plugins/, server/routes/, server/app.ts)
//   routes     nothing imports server/routes/ except server/app.ts, routes/ itself and the tests of a route
//
// Packages (bare specifiers, node:*) are not restricted. A value import across a boundary is a violation and
// fails the check; a type-only one (`import type`, `export type`, or braces naming only `type` bindings) is
// erased by the compiler, so it is listed separately and does not fail. Each is printed as
// `file: imports X (rule)`. Exits 1 on any value violation or runtime import cycle.
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

const under = (path, folder) => path === folder || path.startsWith(`${folder}/`);
const anyUnder = (path, folders) => folders.some((folder) => under(path, folder));

/** The rules: each says whether `from` may import `to` (repo-relative paths), or null when it does not apply. */
const RULES = [
  {
    name: 'protocols',
    applies: (from) => under(from, 'server/protocols'),
    allows: (to) => anyUnder(to, ['server/protocols', 'common']),
  },
  {
    name: 'billing',
    applies: (from) => under(from, 'server/billing'),
    allows: (to) => anyUnder(to, ['server/billing', 'server/db', 'server/repositories', 'common']),
  },
  {
    name: 'relay',
    applies: (from) => under(from, 'server/relay'),
    allows: (to) =>
      anyUnder(to, [
        'server/relay',
        'server/protocols',
        'server/billing',
        'server/db',
        'server/repositories',
        'common',
        'server/services',
        'server/channels',
        'server/webhooks',
      ]),
  },
  {
    name: 'routes',
    applies: (from, to) => under(to, 'server/routes') && !under(from, 'server/routes'),
    allows: (to, from) => from === 'server/app.ts' || under(from, 'tests'),
  },
];

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
        for (const rule of RULES) {
          if (!rule.applies(from, to) || rule.allows(to, from)) continue;
          const key = `${to}\0${rule.name}\0${typeOnly}`;
          if (seen.has(key)) continue;
          seen.add(key);
          violations.push({ file: from, imports: to, rule: rule.name, typeOnly });
        }
      }
    }
  }
  return violations.sort(
    (a, b) => Number(a.typeOnly) - Number(b.typeOnly) || a.file.localeCompare(b.file) || a.imports.localeCompare(b.imports),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = findBoundaryViolations();
  const values = violations.filter((v) => !v.typeOnly);
  const types = violations.filter((v) => v.typeOnly);
  for (const v of values) console.log(`${v.file}: imports ${v.imports} (${v.rule})`);
  if (types.length > 0) {
    console.log(`\ntype-only imports across a boundary (erased at runtime, not failing):`);
    for (const v of types) console.log(`${v.file}: imports ${v.imports} (${v.rule}, type-only)`);
  }
  const cycles = findImportCycles();
  for (const cycle of cycles) console.log(`cycle (${cycle.length} modules):\n  ${cycle.join('\n  ')}`);
  console.log(`\n${values.length} boundary violation(s), ${types.length} type-only, ${cycles.length} runtime import cycle(s)`);
  if (values.length > 0 || cycles.length > 0) process.exit(1);
}
