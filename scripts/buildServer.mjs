// Bundles the gateway (server/ and common/) into one ES module with esbuild,
// so `npm start` runs plain JavaScript: no TypeScript loader in the process,
// which costs memory and start-up time. Packages stay external (node_modules).
// The bundle sits one folder below the repository root, like server/main.ts,
// so paths it derives from its own location (the repository root) still hold.
//
// Used by `npm run build`, `npm start` (when the bundle is missing or older
// than the sources) and the benchmark, which bundles its processes the same way.
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { linesOnly } from './sourceMapLines.mjs';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Bundles `entry` (relative to the repository root) into build/<name>.mjs and returns its path. */
export async function bundle(entry, name) {
  const outfile = join(root, 'build', `${name}.mjs`);
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    // stack traces need the mappings, not the sources: without them the map Node keeps in memory is a third the size
    sourcesContent: false,
    logLevel: 'warning',
  });
  // one mapping per line: the map Node parses at the first stack trace stays in its heap for good (sourceMapLines.mjs)
  const mapFile = `${outfile}.map`;
  writeFileSync(mapFile, JSON.stringify(linesOnly(JSON.parse(readFileSync(mapFile, 'utf8')))));
  return outfile;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outfile = await bundle('server/main.ts', 'gateway');
  console.log(`[switchboard] gateway bundled: ${outfile}`);
}
