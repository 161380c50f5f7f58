#!/usr/bin/env node
// Runtime import cycles among the modules of one folder tree (server/ by default,
// src/ for the console). Type-only imports and exports
// are erased by the compiler, so they cannot form a cycle at runtime and are
// skipped. Prints every strongly connected component with more than one module
// and exits 1 when there is any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(m?js|tsx?)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (/\.tsx?$/.test(candidate) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

// Statements that load another module at runtime: `import ... from 'x'`,
// `import 'x'`, `export ... from 'x'`. `import type` / `export type` are skipped,
// and so is an import whose braces name only `type` bindings.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s*)?['"]([^'"]+)['"]/gm;

function runtimeImports(file) {
  const text = readFileSync(file, 'utf8');
  const targets = new Set();
  for (const match of text.matchAll(STATEMENT)) {
    const [, keyword, typeOnly, clause, spec] = match;
    if (typeOnly || !spec.startsWith('.')) continue;
    if (keyword === 'export' && !/\bfrom\b/.test(match[0])) continue;
    const braces = clause.match(/^\{([\s\S]*)\}$/);
    if (braces) {
      const names = braces[1]
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    }
    const target = resolveImport(file, spec);
    if (target) targets.add(target);
  }
  return targets;
}

/** Every strongly connected component with more than one module, as repo-relative paths. */
export function findImportCycles(root = join(repoRoot, 'server')) {
  const files = walk(root);
  const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
  // Tarjan's algorithm, iterative so deep graphs cannot overflow the stack.
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  for (const start of files) {
    if (indices.has(start)) continue;
    const work = [[start, [...(graph.get(start) ?? [])], 0]];
    indices.set(start, index);
    low.set(start, index);
    index++;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, edges] = frame;
      if (frame[2] < edges.length) {
        const next = edges[frame[2]++];
        if (!graph.has(next)) continue;
        if (!indices.has(next)) {
          indices.set(next, index);
          low.set(next, index);
          index++;
          stack.push(next);
          onStack.add(next);
          work.push([next, [...graph.get(next)], 0]);
        } else if (onStack.has(next)) {
          low.set(node, Math.min(low.get(node), indices.get(next)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === indices.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(relative(repoRoot, member));
        } while (member !== node);
        if (component.length > 1) components.push(component.sort());
      }
    }
  }
  return components;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const cycles = findImportCycles();
  for (const cycle of cycles) console.log(`cycle (${cycle.length} modules):\n  ${cycle.join('\n  ')}`);
  if (cycles.length > 0) process.exit(1);
  console.log('no runtime import cycles in server/');
}
