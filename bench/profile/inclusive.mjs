// Reads a .cpuprofile (node --cpu-prof) of a bundled process and prints the
// inclusive time by function (its own time and its callees'), with bundle
// positions mapped back to the sources; idle time is left out of the shares.
// Where analyze.mjs shows where the time is spent, this shows on whose behalf.
//
//   node bench/profile/inclusive.mjs <profile.cpuprofile> [top=80]
import { readFileSync } from 'node:fs';
import { originalPositionFor } from '@jridgewell/trace-mapping';
import { mapFor } from './frames.mjs';

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const selfUs = new Map();
profile.samples.forEach((id, index) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

function label(frame) {
  const name = frame.functionName || '(anon)';
  const map = mapFor(frame.url);
  if (map && frame.lineNumber >= 0) {
    const position = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber });
    if (position.source) return `${name} ${position.source.replace(/^(\.\.\/)+/, '')}:${position.line}`;
  }
  return `${name} ${frame.url.replace(/^file:\/\/.*node_modules\//, 'nm:')}:${frame.lineNumber + 1}`;
}

const inclusive = new Map();
let busy = 0;
for (const [id, us] of selfUs) {
  if (byId.get(id).callFrame.functionName === '(idle)') continue;
  busy += us;
  // a recursive function counts once per sample
  const counted = new Set();
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const key = label(byId.get(at).callFrame);
    if (counted.has(key)) continue;
    counted.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}
console.log(`busy ${(busy / 1e6).toFixed(2)} s`);
for (const [key, us] of [...inclusive].sort((left, right) => right[1] - left[1]).slice(0, Number(topArg ?? 80)))
  console.log(`${((100 * us) / busy).toFixed(2).padStart(6)}% ${key}`);
