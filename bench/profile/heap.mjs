// Summarises a .heapsnapshot: self size by node type and constructor name, the largest first.
//   node bench/profile/heap.mjs <snapshot> [top=40]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
const snapshot = JSON.parse(readFileSync(file, 'utf8'));
const {
  node_fields: fields,
  node_types: [types],
} = snapshot.snapshot.meta;
const width = fields.length;
const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((name) => fields.indexOf(name));
const { nodes, strings } = snapshot;
const groups = new Map();
let total = 0;
for (let index = 0; index < nodes.length; index += width) {
  const type = types[nodes[index + typeAt]];
  let name = strings[nodes[index + nameAt]];
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '';
  if (type === 'code') name = name.slice(0, 40);
  const key = `${type} ${name.slice(0, 80)}`;
  const size = nodes[index + sizeAt];
  total += size;
  const group = groups.get(key) ?? { size: 0, count: 0 };
  group.size += size;
  group.count += 1;
  groups.set(key, group);
}
console.log(`total ${(total / 1048576).toFixed(1)} MiB in ${nodes.length / width} nodes`);
for (const [key, { size, count }] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, Number(topArg ?? 40)))
  console.log((size / 1048576).toFixed(2).padStart(7), 'MiB', String(count).padStart(8), key);
