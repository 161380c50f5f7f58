// Relay durations as a mergeable sketch (the DDSketch idea, Masson et al.,
// VLDB 2019): a duration d falls in bucket ceil(log_γ d) with γ = (1+α)/(1-α),
// and every duration of a bucket reads back as 2γ^i/(γ+1), within α of it.
// Sketches merge by adding counts, so an hour's, a day's and a month's
// percentiles all come from the durations actually measured, at the same
// relative accuracy, without keeping the durations. A few hundred buckets
// cover a millisecond to ten minutes; a channel's hour rarely fills more
// than a hundred of them.

/** The relative accuracy of every percentile read from a sketch. */
export const SKETCH_RELATIVE_ACCURACY = 0.01;
const GAMMA = (1 + SKETCH_RELATIVE_ACCURACY) / (1 - SKETCH_RELATIVE_ACCURACY);
const LOG_GAMMA = Math.log(GAMMA);

/** Bucket index → how many durations fell in it. */
export type LatencySketch = Map<number, number>;

/**
 * The bucket of a duration. Durations are whole milliseconds, so 0 means
 * "under one": it joins the 1 ms bucket rather than a bucket of its own
 * (log 0 has none), off by less than the clock's resolution.
 */
export function sketchIndex(elapsedMs: number): number {
  return Math.ceil(Math.log(Math.max(elapsedMs, 1)) / LOG_GAMMA);
}

export function addToSketch(sketch: LatencySketch, elapsedMs: number, count = 1): void {
  const index = sketchIndex(elapsedMs);
  sketch.set(index, (sketch.get(index) ?? 0) + count);
}

/** Adds `from`'s counts into `into`. */
export function mergeSketch(into: LatencySketch, from: LatencySketch): LatencySketch {
  for (const [index, count] of from) into.set(index, (into.get(index) ?? 0) + count);
  return into;
}

/** The stored form: a JSON object of bucket index to count, indexes ascending. */
export function encodeSketch(sketch: LatencySketch): string {
  const indexes: number[] = [];
  for (const [index, count] of sketch) if (count > 0) indexes.push(index);
  indexes.sort((left, right) => left - right);
  // the text JSON.stringify gives the object of these entries, written directly (each settlement batch encodes a
  // sketch per channel): an object lists its array-index keys ascending first, then the others (negative) as added
  let text = '';
  const member = (index: number) => {
    const count = sketch.get(index)!;
    text += `${text === '' ? '{' : ','}"${index}":${Number.isFinite(count) ? count : 'null'}`;
  };
  for (const index of indexes) if (index >= 0) member(index);
  for (const index of indexes) if (index < 0) member(index);
  return text === '' ? '{}' : `${text}}`;
}

/** The stored form back; null, '' or anything unreadable is an empty sketch (rows written before sketches were). */
export function decodeSketch(text: string | null | undefined): LatencySketch {
  const sketch: LatencySketch = new Map();
  if (!text) return sketch;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return sketch;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return sketch;
  const stored = parsed as Record<string, unknown>;
  for (const key in stored) {
    const index = Number(key);
    const count = stored[key];
    if (Number.isInteger(index) && typeof count === 'number' && count > 0) sketch.set(index, count);
  }
  return sketch;
}

/**
 * The duration at `fraction` (0..1) by nearest rank: the value of the bucket
 * holding the ceil(fraction × n)-th fastest duration. Null when the sketch is
 * empty: no measured duration, so no figure.
 */
export function sketchQuantile(sketch: LatencySketch, fraction: number): number | null {
  let total = 0;
  for (const count of sketch.values()) total += count;
  if (total === 0) return null;
  const rank = Math.min(total, Math.max(1, Math.ceil(total * fraction)));
  let seen = 0;
  for (const index of [...sketch.keys()].sort((left, right) => left - right)) {
    seen += sketch.get(index)!;
    if (seen >= rank) return (2 * GAMMA ** index) / (GAMMA + 1);
  }
  return null;
}
