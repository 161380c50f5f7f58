// Just enough multipart/form-data for the audio routes: find a text field
// (the model, for routing) and, when a channel maps the model, swap that one
// value. Every other byte of the upload, file included, is left as it came.
// Reference: https://www.rfc-editor.org/rfc/rfc7578

export interface MultipartField {
  value: string;
  /** Byte range of the value inside the body. */
  start: number;
  end: number;
}

export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}

/** The first non-file part named `name`, or undefined. */
export function findMultipartField(body: Buffer, boundary: string, name: string): MultipartField | undefined {
  return multipartParts(body, boundary).find((part) => part.name === name && !part.file);
}

/** Every file part named `name`: its bytes (a vendor reads one, but which one is its own business). */
export function findMultipartFiles(body: Buffer, boundary: string, name: string): Buffer[] {
  return multipartParts(body, boundary)
    .filter((part) => part.name === name && part.file)
    .map((part) => body.subarray(part.start, part.end));
}

interface MultipartPart extends MultipartField {
  name: string | undefined;
  file: boolean;
}

/** The parts of a body, in order, up to its closing delimiter (or the first part cut short). */
function multipartParts(body: Buffer, boundary: string): MultipartPart[] {
  const parts: MultipartPart[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  let position = body.indexOf(delimiter);
  while (position !== -1) {
    const partStart = position + delimiter.length;
    // "--" after a delimiter closes the body
    if (body[partStart] === 0x2d && body[partStart + 1] === 0x2d) break;
    const headersEnd = body.indexOf('\r\n\r\n', partStart);
    if (headersEnd === -1) break;
    const valueStart = headersEnd + 4;
    const valueEnd = body.indexOf(nextDelimiter, valueStart);
    if (valueEnd === -1) break;
    const headers = body.toString('utf8', partStart, headersEnd);
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
    const file = /filename\*?=/i.test(disposition);
    parts.push({
      name: /[;\s]name="([^"]*)"/i.exec(disposition)?.[1],
      file,
      value: file ? '' : body.toString('utf8', valueStart, valueEnd),
      start: valueStart,
      end: valueEnd,
    });
    position = valueEnd + 2;
  }
  return parts;
}

export function replaceMultipartField(body: Buffer, field: MultipartField, value: string): Buffer {
  return Buffer.concat([body.subarray(0, field.start), Buffer.from(value, 'utf8'), body.subarray(field.end)]);
}
