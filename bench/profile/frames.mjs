// A profile's call frame as "function file:line", bundle positions mapped back to
// the sources through the bundle's source map (read once per bundle).
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';

const maps = new Map();

/** The bundle's source map for a frame's url (undefined for anything but a bundled module with its map). */
export function mapFor(url) {
  if (!url.startsWith('file://') || !url.endsWith('.mjs')) return undefined;
  if (!maps.has(url)) {
    const path = fileURLToPath(url) + '.map';
    maps.set(url, existsSync(path) ? new TraceMap(readFileSync(path, 'utf8')) : undefined);
  }
  return maps.get(url);
}

export function frameLabel(frame) {
  const map = mapFor(frame.url);
  if (map && frame.lineNumber >= 0) {
    const position = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber });
    if (position.source) return `${frame.functionName || '(anon)'} ${position.source.replace(/^(\.\.\/)+/, '')}:${position.line}`;
  }
  return `${frame.functionName || '(anon)'} ${frame.url.replace(/^.*node_modules\//, 'nm:')}:${frame.lineNumber + 1}`;
}
