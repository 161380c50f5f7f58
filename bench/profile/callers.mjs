// Who calls a function in a .cpuprofile: self time of frames named `name`,
// by their chain of `depth` callers (source-mapped like analyze.mjs).
//   node bench/profile/callers.mjs <profile> <name> [depth=3]
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';

const [file, name, depthArg] = process.argv.slice(2);
const depth = Number(depthArg ?? 3);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const maps = new Map();
const mapFor = (url) => {
  if (!url.startsWith('file://') || !url.endsWith('.mjs')) return undefined;
  if (!maps.has(url)) {
    const path = fileURLToPath(url) + '.map';
    maps.set(url, existsSync(path) ? new TraceMap(readFileSync(path, 'utf8')) : undefined);
  }
  return maps.get(url);
};
const label = (frame) => {
  const map = mapFor(frame.url);
  if (map && frame.lineNumber >= 0) {
    const p = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber });
    if (p.source) return `${frame.functionName || '(anon)'} ${p.source.replace(/^(\.\.\/)+/, '')}:${p.line}`;
  }
  return `${frame.functionName || '(anon)'} ${frame.url.replace(/^.*node_modules\//, 'nm:')}:${frame.lineNumber + 1}`;
};
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const self = new Map();
let total = 0;
profile.samples.forEach((id, index) => {
  const us = profile.timeDeltas[index] ?? 0;
  if (byId.get(id).callFrame.functionName !== '(idle)') total += us;
  self.set(id, (self.get(id) ?? 0) + us);
});
const chains = new Map();
for (const [id, us] of self) {
  if (byId.get(id).callFrame.functionName !== name) continue;
  const parts = [];
  for (let at = parent.get(id), n = 0; at !== undefined && n < depth; at = parent.get(at), n += 1) parts.push(label(byId.get(at).callFrame));
  const key = parts.join(' <- ');
  chains.set(key, (chains.get(key) ?? 0) + us);
}
for (const [key, us] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(((100 * us) / total).toFixed(2).padStart(6) + '%', key);
