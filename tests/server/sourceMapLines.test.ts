// The bundle's source map is cut to one mapping per original line (scripts/sourceMapLines.mjs):
// every stack frame in our code must still name the file and line it came from.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { build, type BuildOptions } from 'esbuild';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { decodeMappings, encodeMappings, linesOnly } from '../../scripts/sourceMapLines.mjs';

type Segment = number[];
type Codec = {
  decodeMappings: (text: string) => Segment[][];
  encodeMappings: (lines: Segment[][]) => string;
  linesOnly: (map: object, keepSource?: (source: string) => boolean) => { mappings: string; names: string[] };
};
const codec: Codec = { decodeMappings, encodeMappings, linesOnly };

/** Bundles `dir`/entry.ts as the gateway is bundled (whitespace minified), cuts its map, and runs it with source maps on. */
async function bundledAndRun(dir: string, keepSource?: (source: string) => boolean) {
  const outfile = join(dir, 'out.mjs');
  await build({
    entryPoints: [join(dir, 'entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    sourcemap: true,
    sourcesContent: false,
    minifyWhitespace: true,
    logLevel: 'silent',
  });
  writeFileSync(
    `${outfile}.map`,
    JSON.stringify(codec.linesOnly(JSON.parse(readFileSync(`${outfile}.map`, 'utf8')) as object, keepSource)),
  );
  return spawnSync(process.execPath, ['--enable-source-maps', outfile], { encoding: 'utf8' });
}

describe('source maps cut to one mapping per original line', () => {
  it('names the file and line the full map gives at every mapped spot of the gateway bundle, with a sixth of the segments', async () => {
    // @ts-expect-error: a plain ES module of the build scripts, without type declarations
    const { bundle, bundleOptions } = (await import('../../scripts/buildServer.mjs')) as {
      bundle: (entry: string, name: string) => Promise<string>;
      bundleOptions: (entry: string, outfile: string) => BuildOptions;
    };
    const outfile = await bundle('server/main.ts', 'gateway-sourcemap-check');
    const small = JSON.parse(readFileSync(`${outfile}.map`, 'utf8')) as { mappings: string; sources: string[] };
    // the full map again, straight from esbuild, to compare against
    const dir = mkdtempSync(join(tmpdir(), 'sourcemap-'));
    await build({ ...bundleOptions('server/main.ts', join(dir, 'full.mjs')), logLevel: 'silent' });
    const full = JSON.parse(readFileSync(join(dir, 'full.mjs.map'), 'utf8')) as { mappings: string; sources: string[] };
    const fullLines = codec.decodeMappings(full.mappings);
    const smallLines = codec.decodeMappings(small.mappings);
    expect(smallLines.length).toBe(fullLines.length);
    // the whitespace is minified: the bundle is a few long lines, not one per statement
    expect(fullLines.length).toBeLessThan(2_000);
    const fullSegments = fullLines.reduce((sum, line) => sum + line.length, 0);
    const smallSegments = smallLines.reduce((sum, line) => sum + line.length, 0);
    expect(fullSegments).toBeGreaterThan(200_000);
    expect(smallSegments).toBeLessThan(fullSegments / 6);
    // Node names a frame by the nearest mapping at or before it, on its line or any line above
    const kept = smallLines.flatMap((segments, line) => segments.map((segment) => ({ line, segment })));
    const nearest = (line: number, column: number) => {
      let low = 0;
      let high = kept.length - 1;
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        const at = kept[middle];
        if (at.line < line || (at.line === line && at.segment[0] <= column)) low = middle;
        else high = middle - 1;
      }
      return kept[low].segment;
    };
    // each map names its sources from where it lies: resolved, the two name the same files
    const smallSources = small.sources.map((source) => resolve(dirname(outfile), source));
    const fullSources = full.sources.map((source) => resolve(dir, source));
    let ours = 0;
    let packages = 0;
    // every spot that names something else than the full map does (collected: one expect per spot is most of the test's time)
    const wrong: string[] = [];
    fullLines.forEach((segments, line) => {
      for (const segment of segments) {
        if (segment.length !== 4) continue;
        const [column, source, originalLine] = segment;
        const got = nearest(line, column);
        const expected = fullSources[source];
        if (expected.includes('node_modules/')) {
          // a bundled package's frame names its file (the line is where that stretch of it begins)
          if (smallSources[got[1]] !== expected) wrong.push(`${line}:${column} ${smallSources[got[1]]} for ${expected}`);
          packages += 1;
        } else {
          if (smallSources[got[1]] !== expected || got[2] !== originalLine)
            wrong.push(`${line}:${column} ${smallSources[got[1]]}:${got[2]} for ${expected}:${originalLine}`);
          ours += 1;
        }
      }
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(ours).toBeGreaterThan(50_000);
    expect(packages).toBeGreaterThan(50_000);
    // Latin-1 only, so V8 holds the source one byte a character (buildServer.mjs escapes the rest)
    expect(/[\u0100-\uffff]/.test(readFileSync(outfile, 'utf8'))).toBe(false);
  }, 240_000); // it bundles the whole server: 15-20 s quiet, past 60 s on a machine loaded seven times over (CI under load)

  it("names a bundled package's frame by its own file, not by the line of our code before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sourcemap-package-'));
    mkdirSync(join(dir, 'node_modules', 'thrower'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'thrower', 'package.json'), JSON.stringify({ name: 'thrower', main: 'index.js' }));
    writeFileSync(
      join(dir, 'node_modules', 'thrower', 'index.js'),
      ['exports.explode = function explode(what) {', "  throw new Error('boom: ' + what);", '};', ''].join('\n'),
    );
    writeFileSync(
      join(dir, 'entry.ts'),
      [
        "import { explode } from 'thrower';",
        'function ours(): void {',
        "  explode('now');",
        '}',
        'try {',
        '  ours();',
        '} catch (error) {',
        '  console.log((error as Error).stack);',
        '}',
        '',
      ].join('\n'),
    );
    const run = await bundledAndRun(dir, (source) => !source.includes('node_modules/'));
    expect(run.stdout).toContain('boom: now');
    expect(run.stdout).toMatch(/at explode\d* \(\S*node_modules\/thrower\/index\.js:\d+:\d+\)/);
    expect(run.stdout).toMatch(/at ours \(\S*entry\.ts:3:\d+\)/);
  });

  it('keeps the original file and line in a stack trace Node prints', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sourcemap-stack-'));
    writeFileSync(
      join(dir, 'thrower.ts'),
      [
        'export function deep(value: number): number {',
        '  const doubled = value * 2;',
        '  if (doubled > 2) throw new Error(`too big: ${doubled}`);',
        '  return doubled;',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'entry.ts'),
      [
        "import { deep } from './thrower';",
        'try {',
        '  deep(5);',
        '} catch (error) {',
        '  console.log((error as Error).stack);',
        '}',
        '',
      ].join('\n'),
    );
    const run = await bundledAndRun(dir);
    expect(run.stdout).toContain('too big: 10');
    expect(run.stdout).toMatch(/thrower\.ts:3:\d+/);
    expect(run.stdout).toMatch(/entry\.ts:3:\d+/);
  });
});
