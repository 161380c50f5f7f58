// Writes a brotli (.br) and a gzip (.gz) copy beside every compressible file
// of the console build, once, at build time: the gateway then serves the
// smallest copy a browser accepts (@fastify/static `preCompressed`) without
// compressing anything per request. Brotli at its highest quality costs a few
// seconds of build and saves about a seventh over gzip on these bundles.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'vite';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** What is worth compressing: text formats, past the size where the copy pays for itself. */
const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|txt|map|webmanifest)$/;
const MIN_BYTES = 1024;

/** Every file under a folder, recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** Compresses the compressible files of `outDir`; returns [file, raw, brotli, gzip] sizes for the report. */
export function precompressFolder(outDir: string): Array<[file: string, raw: number, brotli: number, gzip: number]> {
  const written: Array<[string, number, number, number]> = [];
  for (const file of filesUnder(outDir)) {
    if (!COMPRESSIBLE.test(file) || statSync(file).size < MIN_BYTES) continue;
    const raw = readFileSync(file);
    const brotli = brotliCompressSync(raw, {
      params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
    });
    const gzip = gzipSync(raw, { level: 9 });
    // a copy larger than the original would never be chosen: leave it out
    if (brotli.length < raw.length) writeFileSync(`${file}.br`, brotli);
    if (gzip.length < raw.length) writeFileSync(`${file}.gz`, gzip);
    written.push([file, raw.length, brotli.length, gzip.length]);
  }
  return written;
}

/** The Vite plugin: compresses the client build once it is written (not the dev server, not source maps). */
export function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'switchboard-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    closeBundle() {
      precompressFolder(outDir);
    },
  };
}
