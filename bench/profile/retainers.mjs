// Retained size by dominator chains is costly; this instead sums the self size of
// nodes matching a type/name filter by their retainer path (up to `depth` edges), using the first retainer of each.
//   node bench/profile/retainers.mjs <snapshot> <type> [name] [depth=4]
import { readFileSync } from 'node:fs';

const [file, wantType, wantName, depthArg] = process.argv.slice(2);
const depth = Number(depthArg ?? 4);
const s = JSON.parse(readFileSync(file, 'utf8'));
const meta = s.snapshot.meta;
const nw = meta.node_fields.length;
const ew = meta.edge_fields.length;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
const { nodes, edges, strings } = s;
const count = nodes.length / nw;
const firstRetainer = new Int32Array(count).fill(-1);
const retainEdge = new Int32Array(count).fill(-1);
let edge = 0;
for (let n = 0; n < count; n += 1) {
  const edgesOf = nodes[n * nw + nEdges];
  for (let k = 0; k < edgesOf; k += 1, edge += ew) {
    const type = edgeTypes[edges[edge + eType]];
    if (type === 'weak' || type === 'shortcut') continue;
    const to = edges[edge + eTo] / nw;
    if (firstRetainer[to] === -1) {
      firstRetainer[to] = n;
      retainEdge[to] = edge;
    }
  }
}
const label = (n) => {
  const type = nodeTypes[nodes[n * nw + nType]];
  const name = strings[nodes[n * nw + nName]];
  return `${type}:${type.includes('string') ? '' : name.slice(0, 50)}`;
};
const edgeLabel = (e) => {
  const type = edgeTypes[edges[e + eType]];
  const name = type === 'element' || type === 'hidden' ? `[${edges[e + eName]}]` : strings[edges[e + eName]];
  return type === 'element' || type === 'hidden' ? '[]' : name;
};
const groups = new Map();
for (let n = 0; n < count; n += 1) {
  const type = nodeTypes[nodes[n * nw + nType]];
  if (type !== wantType) continue;
  if (wantName && strings[nodes[n * nw + nName]] !== wantName) continue;
  const parts = [];
  for (let at = n, d = 0; d < depth && firstRetainer[at] !== -1; d += 1) {
    parts.push(edgeLabel(retainEdge[at]));
    at = firstRetainer[at];
    parts.push(label(at));
  }
  const key = parts.join(' < ');
  const g = groups.get(key) ?? { size: 0, count: 0 };
  g.size += nodes[n * nw + nSize];
  g.count += 1;
  groups.set(key, g);
}
for (const [key, { size, count: c }] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, 30))
  console.log((size / 1048576).toFixed(2).padStart(7), 'MiB', String(c).padStart(7), key);
