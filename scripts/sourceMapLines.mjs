// Cuts a source map down to one mapping per line of the original sources:
// a segment is kept where the original file or line changes, in the order
// of the generated code. Node keeps a parsed source map in memory for as
// long as the process runs, from the first stack trace on (an aborted
// upstream call reads one), at about 150 bytes a segment; esbuild writes a
// segment for nearly every token, so the gateway's map would hold 680,000 of
// them (tens of MiB of heap) where one per original line (about 37,000)
// still names the right file and line in every stack trace. The column of a
// frame becomes that of the line's first mapped token. The bundle's
// whitespace is minified (buildServer.mjs), so the generated code is a few
// very long lines: a cut by generated line would keep one mapping in all.
//
// A bundled package's code keeps one mapping where each of its files begins
// in the bundle (its file and first line there): Node names a frame by the
// nearest mapping before it, so without one a package's frame would borrow
// the name of the last line of our own code before it.
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
 * A source map object with one mapping per original line (kept where the original file or line changes).
 * `keepSource(path)`, when given, says which sources keep their lines mapped: any other source keeps one mapping
 * where each stretch of its code begins, so its frames name its file (at that stretch's first line).
 */
export function linesOnly(map, keepSource = () => true) {
  const kept = map.sources.map((source) => keepSource(source));
  let lastSource = -1;
  let lastLine = -1;
  const lines = decodeMappings(map.mappings).map((segments) => {
    const cut = [];
    for (const segment of segments) {
      if (segment.length !== 4) continue;
      const [, source, line] = segment;
      if (source === lastSource && (line === lastLine || !kept[source])) continue;
      cut.push(segment);
      lastSource = source;
      lastLine = line;
    }
    return cut;
  });
  return { ...map, names: [], mappings: encodeMappings(lines) };
}
