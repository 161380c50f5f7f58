// Who calls a function in a .cpuprofile: self time of frames named `name`,
// by their chain of `depth` callers (source-mapped like analyze.mjs).
//   node bench/profile/callers.mjs <profile> <name> [depth=3]
import { readFileSync } from 'node:fs';
import { frameLabel as label } from './frames.mjs';

const [file, name, depthArg] = process.argv.slice(2);
const depth = Number(depthArg ?? 3);
const profile = JSON.parse(readFileSync(file, 'utf8'));
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
  for (let at = parent.get(id), n = 0; at !== undefined && n < depth; at = parent.get(at), n += 1)
    parts.push(label(byId.get(at).callFrame));
  const key = parts.join(' <- ');
  chains.set(key, (chains.get(key) ?? 0) + us);
}
for (const [key, us] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(((100 * us) / total).toFixed(2).padStart(6) + '%', key);
