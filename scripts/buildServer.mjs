// Bundles the gateway (server/ and common/) into one ES module with esbuild,
// so `npm start` runs plain JavaScript: no TypeScript loader in the process,
// which costs memory and start-up time.
// The bundle sits one folder below the repository root, like server/main.ts,
// so paths it derives from its own location (the repository root) still hold.
//
// Used by `npm run build`, `npm start` (when the bundle is missing or older
// than the sources) and the benchmark, which bundles its processes the same way.
//
// Packages are bundled too, except those loaded on first use (a dynamic
// import(): the Bedrock and Vertex libraries, ws, 2FA, the database drivers
// and Redis, the mailer), which stay in node_modules so that a gateway that
// never needs them never loads them, and better-sqlite3, whose native addon
// is found from its own folder. Measured side by side (bench/profile/cpu.ts,
// c=16, three runs): 7 to 12% less CPU per non-streamed request than with every
// package loaded from node_modules, and the same RSS.
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { linesOnly } from './sourceMapLines.mjs';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Packages left in node_modules: native ones, found from their own folder at run time. */
const NATIVE_PACKAGES = new Set(['better-sqlite3']);

/** The package a bare import names (`@scope/name/sub` -> `@scope/name`). */
const packageOf = (path) =>
  path
    .split('/')
    .slice(0, path.startsWith('@') ? 2 : 1)
    .join('/');

/** An esbuild plugin: a package our code loads with import() (on first use), or a native one, stays external. */
const firstUseExternal = {
  name: 'first-use-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const firstUse = args.kind === 'dynamic-import' && !args.importer.includes('/node_modules/');
      return firstUse || NATIVE_PACKAGES.has(packageOf(args.path)) ? { path: args.path, external: true } : undefined;
    });
  },
};

/** esbuild's options for bundling `entry` (relative to the repository root) into `outfile`. */
export function bundleOptions(entry, outfile) {
  return {
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [firstUseExternal],
    // the bundled CommonJS packages call require(): the bundle is an ES module, so it makes one
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    sourcemap: true,
    // stack traces need the mappings, not the sources: without them the map Node keeps in memory is a third the size
    sourcesContent: false,
    // V8 holds a script's whole source and an entry per line of it for as long as the process runs: without the
    // indentation and line breaks the gateway's bundle is 5.1 MB rather than 7.6, in under a thousand lines rather than 230,000
    minifyWhitespace: true,
    logLevel: 'warning',
  };
}

/**
 * The bundle's text with every character past U+00FF written as a \\uXXXX escape (UTF-16 code units): the same
 * character inside a string, a template, a regular expression or an identifier, and harmless in a comment.
 */
export function escapeBeyondLatin1(text) {
  return text.replace(/[\u0100-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Bundles `entry` (relative to the repository root) into build/<name>.mjs, or into `outfile` when given, and returns its path. */
export async function bundle(entry, name, outfile = join(root, 'build', `${name}.mjs`)) {
  await build(bundleOptions(entry, outfile));
  // one character past Latin-1 (an apostrophe in a package's comment, a CJK regular expression) makes V8 hold the
  // whole source as a two-byte string, twice its size in the heap for as long as the process runs
  writeFileSync(outfile, escapeBeyondLatin1(readFileSync(outfile, 'utf8')));
  // one mapping per original line: the map Node parses at the first stack trace stays in its heap for good
  // (sourceMapLines.mjs); only our own sources are mapped line by line, the packages by file
  const mapFile = `${outfile}.map`;
  writeFileSync(
    mapFile,
    JSON.stringify(linesOnly(JSON.parse(readFileSync(mapFile, 'utf8')), (source) => !source.includes('node_modules/'))),
  );
  return outfile;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outfile = await bundle('server/main.ts', 'gateway');
  console.log(`[switchboard] gateway bundled: ${outfile}`);
}
