// Server modules must load in one pass: a runtime import cycle leaves one side
// reading a binding before its module has finished evaluating.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain .mjs script without type declarations
import { findImportCycles } from '../../scripts/importCycles.mjs';

describe('server import graph', () => {
  it('has no runtime import cycle', () => {
    expect(findImportCycles()).toEqual([]);
  });
});
