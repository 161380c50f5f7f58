// Reads a .cpuprofile (node --cpu-prof) of a bundled process and prints the
// self time by function and by file, with bundle positions mapped back to the
// sources through the bundle's source map. Idle time is left out of the shares.
//
//   node bench/profile/analyze.mjs <profile.cpuprofile> [top=40] [filter]
import { readFileSync } from 'node:fs';
import { originalPositionFor } from '@jridgewell/trace-mapping';
import { mapFor } from './frames.mjs';

const [file, topArg, filter] = process.argv.slice(2);
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map();
const deltas = profile.timeDeltas;
for (let index = 0; index < profile.samples.length; index += 1) {
  const id = profile.samples[index];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[index] ?? 0));
}
function where(frame) {
  const map = mapFor(frame.url);
  if (map && frame.lineNumber >= 0) {
    const position = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber });
    if (position.source) return { file: position.source.replace(/^(\.\.\/)+/, ''), line: position.line, name: position.name };
  }
  const url = frame.url.replace(/^file:\/\/.*node_modules\//, 'nm:').replace(/^node:/, 'node:');
  return { file: url || '(native)', line: frame.lineNumber + 1 };
}
const functions = new Map();
const files = new Map();
let total = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  const frame = node.callFrame;
  if (frame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  total += us;
  const at = where(frame);
  const key = `${frame.functionName || '(anon)'} ${at.file}:${at.line}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  let group = at.file;
  if (group.startsWith('nm:'))
    group =
      'nm:' +
      group
        .slice(3)
        .split('/')
        .slice(0, group.slice(3).startsWith('@') ? 2 : 1)
        .join('/');
  if (!at.file || at.file === '(native)')
    group = frame.functionName.startsWith('(') ? frame.functionName : '(native) ' + frame.functionName;
  files.set(group, (files.get(group) ?? 0) + us);
}
const share = (us) => ((100 * us) / total).toFixed(2).padStart(6) + '%';
console.log(`busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
console.log('\n-- by file / group --');
for (const [key, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(share(us), key);
console.log('\n-- by function --');
for (const [key, us] of [...functions]
  .sort((a, b) => b[1] - a[1])
  .filter(([key]) => !filter || key.includes(filter))
  .slice(0, top))
  console.log(share(us), key);

// inclusive time of project functions (server/ and common/), counted once per sample stack
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const inclusive = new Map();
for (const [id, us] of selfUs) {
  if (byId.get(id).callFrame.functionName === '(idle)') continue;
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at).callFrame;
    const place = where(frame);
    if (!place.file.startsWith('server/') && !place.file.startsWith('common/')) continue;
    const key = `${frame.functionName || '(anon)'} ${place.file}:${place.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}
console.log('\n-- inclusive, project functions --');
for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(share(us), key);
