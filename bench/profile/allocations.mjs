// Reads a .heapprofile (DevTools' sampling heap profiler, HeapProfiler.stopSampling) of a bundled process:
// the bytes allocated by each function (self), mapped through the bundle's source map, the largest first.
// The samples count allocations made during the sampling, live or collected since.
//   node bench/profile/allocations.mjs <profile.heapprofile> [top=40]
import { readFileSync } from 'node:fs';
import { frameLabel as label } from './frames.mjs';

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const bytes = new Map();
let total = 0;
const visit = (node, parentLabel) => {
  const own = node.selfSize;
  const at = label(node.callFrame);
  const key = node.callFrame.url ? at : `${at} <- ${parentLabel}`;
  if (own > 0) {
    bytes.set(key, (bytes.get(key) ?? 0) + own);
    total += own;
  }
  for (const child of node.children) visit(child, at);
};
visit(profile.head, '');
console.log(`sampled ${(total / 1048576).toFixed(1)} MiB`);
for (const [key, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 40)))
  console.log(((100 * size) / total).toFixed(2).padStart(6) + '%', key);
