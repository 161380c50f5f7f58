// Cuts a source map down to one mapping per generated line: the first
// segment of each line that names a source. Node keeps a parsed source map in
// memory for as long as the process runs, from the first stack trace on (an
// aborted upstream call reads one), at about 90 bytes a segment; esbuild
// writes a segment for nearly every token, so the gateway's map held some
// 120,000 of them (about 11 MiB of heap) where one per line (about 20,000)
// still names the right file and line in every stack trace. The column of a
// frame becomes that of the line's first mapped token.
//
// The mappings are Base64 VLQ (https://tc39.es/ecma426/): per line, segments
// separated by commas; each field a delta from the same field of the segment
// before (the generated column resets at each line, the others never do).
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((char, index) => [char, index]));

/** The fields of one segment, decoded from its VLQ text (each a delta). */
function decodeSegment(text) {
  const fields = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT.get(char);
    if (digit === undefined) throw new Error(`not a Base64 VLQ digit: ${char}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  if (shift !== 0) throw new Error('a VLQ number ends mid-way');
  return fields;
}

function encodeNumber(number) {
  let value = number < 0 ? (-number << 1) | 1 : number << 1;
  let text = '';
  do {
    let digit = value & 31;
    value >>>= 5;
    if (value > 0) digit |= 32;
    text += BASE64[digit];
  } while (value > 0);
  return text;
}

/** `mappings` decoded to absolute segments: per generated line, [column, source, line, column] arrays (names dropped). */
export function decodeMappings(mappings) {
  const lines = [];
  const last = [0, 0, 0, 0];
  for (const lineText of mappings.split(';')) {
    const segments = [];
    last[0] = 0;
    if (lineText !== '') {
      for (const segmentText of lineText.split(',')) {
        const fields = decodeSegment(segmentText);
        last[0] += fields[0];
        if (fields.length >= 4) {
          for (let field = 1; field < 4; field += 1) last[field] += fields[field];
          segments.push([last[0], last[1], last[2], last[3]]);
        } else segments.push([last[0]]);
        // a fifth field (a name) is a delta too, but names are dropped: nothing after reads them
      }
    }
    lines.push(segments);
  }
  return lines;
}

/** Absolute segments (as decodeMappings gives) encoded back to a `mappings` string. */
export function encodeMappings(lines) {
  const last = [0, 0, 0, 0];
  return lines
    .map((segments) => {
      last[0] = 0;
      return segments
        .map((segment) => {
          let text = '';
          for (let field = 0; field < segment.length; field += 1) {
            text += encodeNumber(segment[field] - last[field]);
            last[field] = segment[field];
          }
          return text;
        })
        .join(',');
    })
    .join(';');
}

/**
 * A source map object with one mapping per generated line (the line's first segment that names a source).
 * `keepSource(path)`, when given, says which sources keep their lines mapped: a line of any other source maps to
 * nothing, and its frames are named by their place in the bundle.
 */
export function linesOnly(map, keepSource = () => true) {
  const kept = map.sources.map((source) => keepSource(source));
  const lines = decodeMappings(map.mappings).map((segments) => {
    const first = segments.find((segment) => segment.length === 4);
    return first && kept[first[1]] ? [first] : [];
  });
  return { ...map, names: [], mappings: encodeMappings(lines) };
}
