// multipart/form-data read as it arrives (RFC 7578), for uploads too large to
// hold: the body's pieces go in, events come out (a part's start with its
// name and filename, then its bytes in pieces), and only a delimiter's length
// of bytes is ever held back. The audio routes, which forward a body whole,
// use multipart.ts instead.
// Reference: https://www.rfc-editor.org/rfc/rfc7578, https://www.rfc-editor.org/rfc/rfc2046#section-5.1.1

export type MultipartEvent = { kind: 'part'; name: string | undefined; filename: string | undefined } | { kind: 'data'; bytes: Buffer };

export class MultipartError extends Error {}

/** A part's header block may not be longer than this. */
const MAX_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

type State = 'preamble' | 'delimiter' | 'headers' | 'body' | 'done';

/** A quoted (or bare) parameter of a Content-Disposition header. */
function dispositionParameter(disposition: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(disposition);
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2];
}

class MultipartReader {
  private readonly delimiter: Buffer;
  private state: State = 'preamble';
  // the body's first delimiter has no CRLF before it: one is supplied
  private carry: Buffer = CRLF;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  get finished(): boolean {
    return this.state === 'done';
  }

  /** Takes the next piece of the body; yields every event it completes. */
  *push(piece: Buffer): Generator<MultipartEvent> {
    this.carry = this.carry.length === 0 ? piece : Buffer.concat([this.carry, piece]);
    for (;;) {
      const event = this.step();
      if (event === 'wait') return;
      if (event) yield event;
    }
  }

  /** One move of the state machine: an event, undefined (moved on without one) or 'wait' (needs more bytes). */
  private step(): MultipartEvent | undefined | 'wait' {
    switch (this.state) {
      case 'preamble':
      case 'body':
        return this.untilDelimiter();
      case 'delimiter':
        return this.afterDelimiter();
      case 'headers':
        return this.headers();
      default:
        // the epilogue after the closing delimiter is ignored
        this.carry = Buffer.alloc(0);
        return 'wait';
    }
  }

  private untilDelimiter(): MultipartEvent | undefined | 'wait' {
    const at = this.carry.indexOf(this.delimiter);
    const inBody = this.state === 'body';
    if (at === -1) {
      // keep what may be the start of a delimiter; the rest is the part's (or the preamble's, dropped)
      const keep = Math.min(this.carry.length, this.delimiter.length - 1);
      const bytes = this.carry.subarray(0, this.carry.length - keep);
      this.carry = this.carry.subarray(this.carry.length - keep);
      return inBody && bytes.length > 0 ? { kind: 'data', bytes } : 'wait';
    }
    const bytes = this.carry.subarray(0, at);
    this.carry = this.carry.subarray(at + this.delimiter.length);
    this.state = 'delimiter';
    return inBody && bytes.length > 0 ? { kind: 'data', bytes } : undefined;
  }

  /** After a delimiter: "--" closes the body; otherwise the rest of its line (padding) ends at a CRLF. */
  private afterDelimiter(): undefined | 'wait' {
    if (this.carry.length < 2) return 'wait';
    if (this.carry[0] === 0x2d && this.carry[1] === 0x2d) {
      this.state = 'done';
      return undefined;
    }
    const lineEnd = this.carry.indexOf(CRLF);
    if (lineEnd === -1) {
      if (this.carry.length > MAX_HEADER_BYTES) throw new MultipartError('malformed multipart delimiter line');
      return 'wait';
    }
    this.carry = this.carry.subarray(lineEnd + 2);
    this.state = 'headers';
    return undefined;
  }

  private headers(): MultipartEvent | 'wait' {
    // no header at all: the blank line comes first
    const empty = this.carry.length >= 2 && this.carry[0] === 0x0d && this.carry[1] === 0x0a;
    const end = empty ? 0 : this.carry.indexOf(HEADERS_END);
    if (end === -1) {
      if (this.carry.length > MAX_HEADER_BYTES) throw new MultipartError('a multipart part has headers too long');
      return 'wait';
    }
    const text = this.carry.toString('utf8', 0, end);
    this.carry = this.carry.subarray(empty ? 2 : end + 4);
    this.state = 'body';
    const disposition = /^content-disposition:(.*)$/im.exec(text)?.[1] ?? '';
    return { kind: 'part', name: dispositionParameter(disposition, 'name'), filename: dispositionParameter(disposition, 'filename') };
  }
}

/**
 * The events of a multipart body read from `source`, pulled one by one (so the
 * source is read no faster than the events are used). Throws MultipartError on
 * a body that ends before its closing delimiter or has a part's headers too long.
 */
export async function* multipartEvents(source: AsyncIterable<Buffer>, boundary: string): AsyncGenerator<MultipartEvent> {
  const reader = new MultipartReader(boundary);
  for await (const piece of source) {
    yield* reader.push(piece);
    if (reader.finished) return;
  }
  if (!reader.finished) throw new MultipartError('the multipart body ended before its closing delimiter');
}
