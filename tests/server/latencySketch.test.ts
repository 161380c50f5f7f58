// The latency sketch on its own: every percentile within its relative
// accuracy of the exact one, whatever the spread; merging equals sketching the
// union; the stored form round-trips and anything unreadable is empty.
import { describe, expect, it } from 'vitest';
import {
  addToSketch,
  decodeSketch,
  encodeSketch,
  mergeSketch,
  SKETCH_RELATIVE_ACCURACY,
  sketchQuantile,
  type LatencySketch,
} from '../../server/repositories/latencySketch';

const sketchOf = (durations: readonly number[]): LatencySketch => {
  const sketch: LatencySketch = new Map();
  for (const duration of durations) addToSketch(sketch, duration);
  return sketch;
};

/** The nearest-rank percentile of the durations themselves. */
const exact = (durations: readonly number[], fraction: number) =>
  [...durations].sort((left, right) => left - right)[Math.max(1, Math.ceil(durations.length * fraction)) - 1];

describe('the latency sketch', () => {
  it('reads every percentile within 1 % of the measured one, from a millisecond to ten minutes', () => {
    // a fixed, spread-out sample: 1 ms .. 600 s on a log scale, with repeats
    const durations = Array.from({ length: 5_000 }, (_, index) =>
      Math.round(Math.exp((((index * 7919) % 5_000) / 5_000) * Math.log(600_000))),
    );
    const sketch = sketchOf(durations);
    for (const fraction of [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1]) {
      const measured = exact(durations, fraction);
      expect(Math.abs(sketchQuantile(sketch, fraction)! - measured) / measured).toBeLessThanOrEqual(SKETCH_RELATIVE_ACCURACY);
    }
    expect(sketch.size).toBeLessThan(700);
  });

  it('merges to the sketch of the union, and has no figure when empty', () => {
    const left = [10, 20, 30, 40, 5000];
    const right = [15, 25, 35, 900];
    expect(mergeSketch(sketchOf(left), sketchOf(right))).toEqual(sketchOf([...left, ...right]));
    expect(sketchQuantile(new Map(), 0.5)).toBeNull();
    // a duration under a millisecond is recorded as the clock gave it: 0
    expect(sketchQuantile(sketchOf([0]), 0.5)).toBeLessThan(1);
  });

  it('stores as JSON and reads back; null, empty or broken text is an empty sketch', () => {
    const sketch = sketchOf([10, 10, 250, 70_000]);
    const text = encodeSketch(sketch);
    expect(Object.values(JSON.parse(text))).toEqual([2, 1, 1]);
    expect(decodeSketch(text)).toEqual(sketch);
    for (const stored of [null, '', '{', '[1,2]', '"x"', '{"a":1,"3":-1}']) expect(decodeSketch(stored)).toEqual(new Map());
  });
});
