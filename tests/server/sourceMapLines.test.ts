// The bundle's source map is cut to one mapping per line (scripts/sourceMapLines.mjs):
// every stack frame in our code must still name the file and line it came from.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { build, type BuildOptions } from 'esbuild';
import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { decodeMappings, encodeMappings, linesOnly } from '../../scripts/sourceMapLines.mjs';

type Segment = number[];
type Codec = {
  decodeMappings: (text: string) => Segment[][];
  encodeMappings: (lines: Segment[][]) => string;
  linesOnly: (map: object) => { mappings: string; names: string[] };
};
const codec: Codec = { decodeMappings, encodeMappings, linesOnly };

describe('source maps cut to one mapping per line', () => {
  it('maps every line of the gateway bundle to the file and line the full map gives, with a sixth of the segments', async () => {
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
    const fullSegments = fullLines.reduce((sum, line) => sum + line.length, 0);
    const smallSegments = smallLines.reduce((sum, line) => sum + line.length, 0);
    expect(fullSegments).toBeGreaterThan(50_000);
    expect(smallSegments).toBeLessThan(fullSegments / 4);
    // sources resolved from where each map lies, so the two name the same files
    const fullTrace = new TraceMap(full as never, join(dir, 'full.mjs.map'));
    const smallTrace = new TraceMap(small as never, `${outfile}.map`);
    let checked = 0;
    fullLines.forEach((segments, index) => {
      const first = segments.find((segment) => segment.length === 4);
      // a bundled package's lines are not mapped: its frames name their place in the bundle
      if (!first || full.sources[first[1]].includes('node_modules/')) return expect(smallLines[index]).toEqual([]);
      // a frame anywhere on the line (its first mapped token, or further right) names the line's first token's place
      for (const column of [first[0], first[0] + 7]) {
        const expected = originalPositionFor(fullTrace, { line: index + 1, column: first[0] });
        const got = originalPositionFor(smallTrace, { line: index + 1, column });
        expect([got.source, got.line]).toEqual([expected.source, expected.line]);
      }
      checked += 1;
    });
    expect(checked).toBeGreaterThan(15_000);
    // Latin-1 only, so V8 holds the source one byte a character (buildServer.mjs escapes the rest)
    expect(/[\u0100-\uffff]/.test(readFileSync(outfile, 'utf8'))).toBe(false);
  }, 240_000); // it bundles the whole server: 15-20 s quiet, past 60 s on a machine loaded seven times over (CI under load)

  it('escapes characters past Latin-1 to the same strings, templates and regular expressions', async () => {
    // @ts-expect-error: a plain ES module of the build scripts, without type declarations
    const { escapeBeyondLatin1 } = (await import('../../scripts/buildServer.mjs')) as { escapeBeyondLatin1: (text: string) => string };
    const source =
      "// response’s body\nexport const text = 'a’b😀 é'; export const template = `余额${1}`; export const pattern = /余额不足|😀/u;";
    const escaped = escapeBeyondLatin1(source);
    expect(/[\u0100-\uffff]/.test(escaped)).toBe(false);
    expect(escaped).toContain('é');
    const dir = mkdtempSync(join(tmpdir(), 'latin1-'));
    writeFileSync(join(dir, 'escaped.mjs'), escaped);
    const loaded = (await import(join(dir, 'escaped.mjs'))) as { text: string; template: string; pattern: RegExp };
    expect(loaded.text).toBe('a’b😀 é');
    expect(loaded.template).toBe('余额1');
    expect(loaded.pattern.test('账户余额不足')).toBe(true);
    expect(loaded.pattern.test('x😀')).toBe(true);
  });

  it('encodes back exactly what it decodes', () => {
    const lines: Segment[][] = [
      [
        [0, 0, 0, 0],
        [5, 0, 0, 9],
      ],
      [],
      [[2, 1, 40, 3], [9]],
      [[0, 0, 1, 0]],
    ];
    expect(codec.decodeMappings(codec.encodeMappings(lines))).toEqual(lines);
    // "AAAA" is all zeros; "SAAS" adds 9 to the column and the original column; "gBAAgB" starts a line at 16, 16 further in the source
    expect(codec.decodeMappings('AAAA,SAAS;gBAAgB')).toEqual([
      [
        [0, 0, 0, 0],
        [9, 0, 0, 9],
      ],
      [[16, 0, 0, 25]],
    ]);
    expect(() => codec.decodeMappings('A!AA')).toThrow(/Base64 VLQ/);
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
    const outfile = join(dir, 'out.mjs');
    await build({
      entryPoints: [join(dir, 'entry.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'silent',
    });
    writeFileSync(`${outfile}.map`, JSON.stringify(codec.linesOnly(JSON.parse(readFileSync(`${outfile}.map`, 'utf8')) as object)));
    const run = spawnSync(process.execPath, ['--enable-source-maps', outfile], { encoding: 'utf8' });
    expect(run.stdout).toContain('too big: 10');
    expect(run.stdout).toMatch(/thrower\.ts:3:\d+/);
    expect(run.stdout).toMatch(/entry\.ts:3:\d+/);
  });
});
